"""`lineagegraph serve`: the HTTP API in front of the store."""

from __future__ import annotations

import contextlib

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import pass_app
from lineagegraph.errors import Interrupted
from lineagegraph.settings import with_overrides


@cli.command("serve")
@click.option("--host", help="Address to listen on (default 127.0.0.1; others need a token).")
@click.option("--port", type=int, help="TCP port (default 5000, Marquez's).")
@click.option(
    "--token",
    help="API key clients must send as 'Authorization: Bearer <token>'. Prefer "
    "LINEAGEGRAPH_SERVE__TOKEN: a command line is visible to other users.",
)
@pass_app
def serve_command(app: App, host: str | None, port: int | None, token: str | None) -> None:
    """Run an OpenLineage endpoint and a Marquez-compatible lineage API over the store.

    Point OpenLineage integrations (Airflow, Spark, dbt, openlineage-python) at it with
    OPENLINEAGE_URL=http://HOST:PORT; each event is on disk before it is acknowledged and in
    the graph about a second later. Scripts written for Marquez read lineage unchanged:
    GET /api/v1/lineage?nodeId=dataset:NAMESPACE:NAME&depth=N, Marquez's dataset and job
    listings and column lineage too. Also the orphans and cost reports (/api/v1/orphans,
    /api/v1/cost, JSON or CSV), Prometheus /metrics, /healthz and /openapi.json (every
    route). Open http://HOST:PORT/ in a browser for the lineage explorer (search, click to
    expand, a column view whose columns light up their lineage when clicked, paths, asset
    pages; with a token, type it into the page). With [kafka] bootstrap_servers and topics
    set, it also consumes those topics for good (offsets committed once the events are on
    disk; the consumer in /healthz and /metrics). Stop with Ctrl-C or SIGTERM: events
    already accepted are ingested first.

    While it runs, the embedded store stays loaded: other lineagegraph commands on the same
    data directory (upstream, path, status, ...) use its server and answer without loading the
    graph again.

    \b
    Example:
      LINEAGEGRAPH_SERVE__TOKEN=s3cret lineagegraph serve --port 5000
      curl -H 'Authorization: Bearer s3cret' \\
        'http://127.0.0.1:5000/api/v1/lineage?nodeId=dataset:s3://raw:sales&depth=5'
    """
    from lineagegraph.serve.server import serve

    settings = with_overrides(app.settings, "serve", host=host, port=port, token=token)
    settings = with_overrides(settings, "alerts")  # serve evaluates them: checked now
    options = settings.serve
    click.echo(
        f"lineagegraph serve: http://{options.host}:{options.port} "
        f"(store {settings.graph.location}; "
        f"token {'required' if options.token else 'not set'})",
        err=True,
    )
    with contextlib.suppress(Interrupted):  # SIGTERM/SIGINT: a normal stop, after cleanup
        serve(settings)
    click.echo("lineagegraph serve: stopped", err=True)
