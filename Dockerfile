# lineagegraph serve in a container (docker-compose.yml runs it beside Neo4j).
#   docker build -t lineagegraph .
#   docker run -e LINEAGEGRAPH_SERVE__TOKEN=... -p 127.0.0.1:5000:5000 lineagegraph
FROM python:3.11-slim
WORKDIR /build
COPY pyproject.toml README.md ./
COPY src ./src
COPY cypher ./cypher
COPY config ./config
RUN pip install --no-cache-dir ".[serve]" \
    && useradd --create-home --uid 10001 lineagegraph \
    && mkdir /data && chown lineagegraph /data
USER lineagegraph
WORKDIR /home/lineagegraph
# The spool of accepted events (and the embedded store, without [graph] uri) lives here.
ENV LINEAGEGRAPH_GRAPH__DATA_DIR=/data
VOLUME /data
EXPOSE 5000
ENTRYPOINT ["lineagegraph"]
CMD ["serve", "--host", "0.0.0.0", "--port", "5000"]
