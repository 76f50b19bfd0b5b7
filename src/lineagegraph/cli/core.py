"""init, doctor, status and query: the commands that work on the graph itself."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from lineagegraph.cli.app import App, cli
from lineagegraph.cli.common import format_option, output_option, pass_app
from lineagegraph.errors import ConfigError, QueryError
from lineagegraph.graph import embedded
from lineagegraph.graph.statements import statement, statement_names
from lineagegraph.graph.store_files import DamagedStore
from lineagegraph.output import FORMATS, format_rows, human_times, time_text, write_file
from lineagegraph.pipeline import now_ms
from lineagegraph.questions.status import graph_status
from lineagegraph.store_check import require_existing_store

if TYPE_CHECKING:
    from lineagegraph.harvest.kafka import KafkaStatus


@cli.command()
@pass_app
def init(app: App) -> None:
    """Create the graph's constraints and indexes (safe to run again).

    Every harvest and `demo` does this on its own; run it to set up an empty store (or a
    Neo4j database) before anything reads it.

    \b
    Examples:
      lineagegraph init
      lineagegraph --data-dir lineagegraph-demo/graph init
      lineagegraph --graph bolt://localhost:7687 init
    """
    with app.store() as store:
        store.init_schema()
        click.echo(f"schema ready on {store.backend} ({store.location})")


@cli.command()
@click.option(
    "--repair",
    is_flag=True,
    help="Recover what can be recovered, after copying the damaged files aside.",
)
@pass_app
def doctor(app: App, repair: bool) -> None:
    """Check the embedded store's files; say what a damaged store can recover, and with
    --repair recover it.

    A command on a damaged store stops with exit code 3 and changes nothing; this says what
    is wrong with which file, and what --repair would keep and lose. --repair first copies the
    files into a damaged-<time> directory in the store, then cuts a file after its last whole
    write, or writes a missing manifest. Stop every command and `serve` on the store first.
    Exit code 3 while the store stays damaged.

    \b
    Examples:
      lineagegraph doctor
      lineagegraph --data-dir /var/lib/lineagegraph doctor --repair
    """
    if app.settings.graph.uri:
        raise ConfigError("doctor checks the embedded store; a Neo4j server has its own tools")
    require_existing_store(app.settings)
    findings, copy = embedded.doctor(app.settings.graph.data_dir, repair=repair)
    for f in findings:
        click.echo(f"{f.file} {f.problem}\n  --repair: {f.recovery}")
    where = app.settings.graph.data_dir.expanduser().resolve()
    if not findings:
        click.echo(f"the store's files in {where} are whole")
    elif copy is None:
        raise DamagedStore(
            f"the embedded store in {where} is damaged; `lineagegraph doctor --repair` "
            "recovers what is listed above, after keeping a copy of the files"
        )
    else:
        click.echo(f"repaired the store in {where}; the damaged files are kept in {copy}")


@cli.command()
@click.option("--runs", default=10, show_default=True, help="How many recent harvest runs to list.")
@click.option(
    "--max-age-hours",
    default=26.0,
    show_default=True,
    help="Flag a source whose last successful harvest is older than this.",
)
@format_option(["table", "json"], "Output format.")
@pass_app
def status(app: App, runs: int, max_age_hours: float, fmt: str) -> None:
    """Show what the graph holds: assets, lineage coverage, data quality, freshness, harvests.

    \b
    Example:
      lineagegraph status --max-age-hours 6 --format json
    """
    from lineagegraph.harvest.kafka import kafka_status  # confluent-kafka: only when configured

    require_existing_store(app.settings)
    with app.store() as store:
        facts = graph_status(store, now_ms(), max_age_hours, runs)
        kafka = kafka_status(store, app.settings.kafka)
        where = f"{store.backend} ({store.location})"
    if fmt == "json":
        more = {"kafka": dataclasses.asdict(kafka)} if kafka else {}
        click.echo(json.dumps({"graph": where, **dataclasses.asdict(facts), **more}, indent=2))
        return
    click.echo(f"graph: {where}")
    if not facts.assets:
        click.echo("no assets yet: run a harvest (lineagegraph harvest --help)")
    else:
        rows = [[a["kind"], a["system"], a["assets"], a["deleted"]] for a in facts.assets]
        click.echo(format_rows(["kind", "system", "assets", "soft-deleted"], rows, "table"))
    if facts.coverage:
        click.echo("\nlineage coverage (assets with any lineage):")
        rows = [
            [c["kind"], c["assets"], c["with_lineage"], f"{c['share']:.0%}"] for c in facts.coverage
        ]
        click.echo(format_rows(["kind", "assets", "with lineage", "share"], rows, "table"))
    if any(facts.quality.values()):
        click.echo(f"\ndata quality: {facts.failing_assets} failing asset(s) (fail or error)")
        rows = [[quality, count] for quality, count in facts.quality.items()]
        click.echo(format_rows(["quality", "assets with checks"], rows, "table"))
    if facts.freshness:
        click.echo(f"\nfreshness (stale after {max_age_hours:g} h):")
        rows = [
            [
                f["system"],
                f["scope"],
                time_text(f["last_success"]),
                f["age_hours"],
                "STALE" if f["stale"] else "ok",
            ]
            for f in facts.freshness
        ]
        columns = ["system", "scope", "last success", "age h", "state"]
        click.echo(format_rows(columns, rows, "table"))
    if facts.runs:
        click.echo("\nrecent harvests:")
        rows = [
            [
                r["system"],
                r["scope"],
                r["status"],
                time_text(r["started"]),
                time_text(r["finished"]),
                time_text(r["watermark"]),
                r["error"],
            ]
            for r in facts.runs
        ]
        cols = ["system", "scope", "status", "started", "finished", "watermark", "error"]
        click.echo(format_rows(cols, rows, "table"))
    if kafka:
        show_kafka(kafka)


def show_kafka(kafka: KafkaStatus) -> None:
    """`status` on Kafka: each group's last harvest, then the configured group's lag."""
    if kafka.harvests:
        click.echo("\nkafka harvests (the last of each group):")
        cols = ["scope", "status", "finished", "consumed", "dead-lettered", "committed", "lag"]
        rows = [
            [h["scope"], h["status"], time_text(h["finished"]), h["consumed"],
             h["dead_lettered"], h["committed"], h["lag"]]
            for h in kafka.harvests
        ]  # fmt: skip
        click.echo(format_rows(cols, rows, "table"))
    if kafka.unreachable:
        click.echo(f"\nkafka lag: not known ({kafka.unreachable})")
    elif kafka.lag:
        click.echo(f"\nkafka lag now ({sum(p.lag for p in kafka.lag):,} messages to read):")
        rows = [[p.topic, p.partition, p.committed, p.end, p.lag] for p in kafka.lag]
        click.echo(format_rows(["topic", "partition", "committed", "end", "lag"], rows, "table"))


@cli.command()
@click.argument("cypher", required=False)
@click.option("-f", "--file", "file", type=click.File("r"), help="Read the query from a file.")
@click.option("-n", "--name", help="Run a named statement from cypher/ (see --list).")
@click.option("--list", "list_names", is_flag=True, help="List the named statements and exit.")
@click.option(
    "-p",
    "--param",
    "params",
    multiple=True,
    metavar="KEY=VALUE",
    help="A query parameter ($KEY); VALUE is JSON if it parses (42, true, [1,2]), else a string.",
)
@click.option(
    "--write", is_flag=True, help="Allow the query to change the graph (read-only otherwise)."
)
@format_option(FORMATS, "Output format.")
@output_option("Write the result to this file instead of the terminal.")
@click.option(
    "--epoch-ms",
    is_flag=True,
    help="Keep times as epoch milliseconds in table and markdown output (json and csv always "
    "do); by default a time column (last_seen, deleted_at, ...) is shown as UTC.",
)
@pass_app
def query(
    app: App,
    cypher: str | None,
    file: Any,
    name: str | None,
    list_names: bool,
    params: tuple[str, ...],
    write: bool,
    fmt: str,
    output: Path | None,
    epoch_ms: bool,
) -> None:
    """Run ad-hoc Cypher against the graph, read-only unless --write.

    Times (epoch milliseconds in the graph) are shown as UTC in a table, as `status` shows
    them: 2024-06-01 06:00:00Z.

    \b
    Examples (on the demo's graph):
      lineagegraph query "MATCH (t:Table) RETURN t.urn, t.last_seen LIMIT 10"
      lineagegraph query 'MATCH (a:Asset {urn: $urn})-[:FLOWS_TO]->(b) RETURN b.urn' \\
          -p urn=snowflake://acme-demo/RAW.PUBLIC.EVENTS_DAILY --format json
      lineagegraph query --name status_assets
    """
    if list_names:
        click.echo("\n".join(statement_names()))
        return
    given = [x for x in (cypher, file, name) if x]
    if len(given) != 1:
        raise click.UsageError("give exactly one of: a CYPHER argument, --file or --name")
    text = cypher or (file.read() if file else statement(name or ""))
    if not text.strip():
        raise QueryError("the query is empty")
    values = parse_params(params)
    if not write:
        require_existing_store(app.settings)
    with app.store() as store:
        result = store.execute(text, values, write=write)
    rows = (
        result.rows
        if epoch_ms or fmt in ("json", "csv")
        else human_times(result.columns, result.rows)
    )
    rendered = format_rows(result.columns, rows, fmt)
    if output:
        write_file(output, rendered + "\n")
        click.echo(f"wrote {len(result.rows)} rows to {output}", err=True)
    else:
        click.echo(rendered)


def parse_params(pairs: tuple[str, ...]) -> dict[str, Any]:
    """`k=v` pairs; values are JSON when they parse, else plain strings."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expected KEY=VALUE, got {pair!r}", param_hint="--param")
        try:
            params[key.strip()] = json.loads(raw)
        except ValueError:
            params[key.strip()] = raw
    return params
