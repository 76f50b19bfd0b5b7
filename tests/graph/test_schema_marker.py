"""Opening an embedded store whose schema is current writes nothing (so a warm command never
waits behind an ingest batch for schema statements); a new store gets the whole schema; an
older one (no marker, or another schema's) is brought up to date. Writes are counted by the
server itself (INFO commandstats)."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
from pathlib import Path

import pytest
from graphs import drop_graph

from lineagegraph.graph import falkordb as falkordb_store
from lineagegraph.graph.falkordb import LEGACY_UNIQUE_KEYS, FalkorDBStore
from lineagegraph.graph.history import delete_assets
from lineagegraph.graph.statements import schema_statements, schema_version
from lineagegraph.graph.store import open_store
from lineagegraph.questions import history
from lineagegraph.settings import GraphSettings

WRITE_COMMANDS = ("cmdstat_graph.QUERY", "cmdstat_graph.CONSTRAINT", "cmdstat_set")


def open_embedded(data_dir: Path) -> FalkorDBStore:
    store = open_store(GraphSettings(data_dir=data_dir, graph_name="marked"))
    assert isinstance(store, FalkorDBStore)
    return store


def writes(keeper: FalkorDBStore) -> int:
    """Graph queries (schema statements are writes), constraint changes and SETs so far."""
    stats = keeper._server.client().info("commandstats")
    return sum(int(stats[name]["calls"]) for name in WRITE_COMMANDS if name in stats)


def indexed(store: FalkorDBStore) -> set[tuple[str, str]]:
    rows = store.execute("CALL db.indexes()", write=False).rows
    return {(row[0], prop) for row in rows for prop in row[1]}


def test_a_new_store_gets_the_schema_and_a_reopen_writes_nothing(tmp_path: Path) -> None:
    with open_embedded(tmp_path) as keeper:  # holds the server, so its counts carry on
        assert len(indexed(keeper)) == len(schema_statements("falkordb"))
        before = writes(keeper)
        for _ in range(3):
            with open_embedded(tmp_path) as store:
                store.ensure_schema()
                assert store.execute("MATCH (n) RETURN count(n)", write=False).rows == [[0]]
        assert writes(keeper) == before
        keeper.init_schema()  # asked for (`lineagegraph init`), it runs in full
        assert writes(keeper) > before


def test_an_older_schema_is_brought_up_to_date(tmp_path: Path) -> None:
    with open_embedded(tmp_path) as store:
        store.execute("DROP INDEX ON :Check(urn)", write=True)
        store._graph.create_node_unique_constraint("Asset", "urn")  # what older stores had
        store._db.connection.set(store._schema_key, "0:older")
    with open_embedded(tmp_path) as store:
        assert ("Check", "urn") in indexed(store)
        assert store._constraints() == []
        assert set(LEGACY_UNIQUE_KEYS) <= indexed(store)
    with open_embedded(tmp_path) as keeper:
        before = writes(keeper)
        open_embedded(tmp_path).close()
        assert writes(keeper) == before  # marked current by the upgrade


def test_an_older_store_gets_changed_at(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A store written before `changed_at` (schema step 2) gets it on open, page by page: the
    newest of each lineage edge's history times, and of each asset's and of the edges leaving
    it, so `diff` finds their changes."""
    table = {"system": "snowflake", "props": {}}
    with open_embedded(tmp_path) as store:
        store.run("merge_tables", {"rows": [{**table, "urn": u, "name": u, "seen": 100}
                                            for u in ("a", "b", "c")]})  # fmt: skip
        delete_assets(store, [{"urn": "b", "at": 300}])
        store.run("merge_tables", {"rows": [{**table, "urn": "b", "name": "b", "seen": 400}]})
        delete_assets(store, [{"urn": "c", "at": 500}])
        flows = [{"src": "a", "dst": d, "at": 100, "via": []} for d in ("b", "c")]
        store.run("merge_flows", {"rows": flows})
        stop = {"src": "a", "dst": "b", "stopped": [200], "resumed": None, "retired_at": 200}
        store.run("history_set_flows", {"rows": [{**stop, "live": []}]})
        store.execute("MATCH (n) SET n.changed_at = null", write=True)
        store.execute("MATCH ()-[e]->() SET e.changed_at = null", write=True)
        store._db.connection.set(store._schema_key, f"2:{schema_version('falkordb')}")
        assert history.diff(store, 150, 250).changes == []
    monkeypatch.setattr(falkordb_store, "ENCODE_PAGE", 2)  # several pages
    with open_embedded(tmp_path) as store:
        assets = store.execute("MATCH (a:Asset) RETURN a.urn, a.changed_at", write=False).rows
        assert sorted(assets) == [["a", 200], ["b", 400], ["c", 500]]  # a: its edge's stop
        edges = store.execute(
            "MATCH (a)-[e:FLOWS_TO]->(b) RETURN b.urn, e.changed_at", write=False
        ).rows
        assert sorted(edges) == [["b", 200], ["c", 100]]
        removed = [(c.what, c.urn, c.to) for c in history.diff(store, 150, 250).changes]
        assert removed == [("FLOWS_TO", "a", "b")]
        assert store._db.connection.get(store._schema_key) == falkordb_store._current_schema()


def test_a_dropped_graph_gets_its_schema_again(tmp_path: Path) -> None:
    with open_embedded(tmp_path) as store:
        drop_graph(store)
    with open_embedded(tmp_path) as store:
        assert len(indexed(store)) == len(schema_statements("falkordb"))


def test_a_new_graph_the_server_never_answers_gets_a_new_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """FalkorDB 4.16 has, rarely, never answered a new graph's first statement. Simulated here by
    stopping the server (SIGSTOP) just before it: the open kills it, starts a new one, makes the
    schema and goes on; nothing waits for ever."""
    monkeypatch.setattr(falkordb_store, "NEW_GRAPH_ANSWER_S", 1.0)
    make_schema = FalkorDBStore.init_schema
    stopped: list[int] = []

    def hanging(store: FalkorDBStore) -> None:
        if not stopped:
            stopped.append(int((tmp_path / "server.pid").read_text()))
            os.kill(stopped[0], signal.SIGSTOP)
        make_schema(store)

    monkeypatch.setattr(FalkorDBStore, "init_schema", hanging)
    with caplog.at_level(logging.WARNING), open_embedded(tmp_path) as store:
        assert len(indexed(store)) == len(schema_statements("falkordb"))
        store.execute("CREATE (:Asset {urn: 'x'})", write=True)
        assert store.execute("MATCH (a:Asset) RETURN a.urn", write=False).rows == [["x"]]
        assert store._server.server_pid() != stopped[0]
    assert "did not answer a new graph's first statement within 1 s" in caplog.text
    state = Path(f"/proc/{stopped[0]}/stat")
    assert not state.exists() or state.read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    with open_embedded(tmp_path) as again:  # the data the new server took is kept
        assert again.execute("MATCH (a:Asset) RETURN a.urn", write=False).rows == [["x"]]


def test_a_restart_never_kills_a_server_another_user_started(tmp_path: Path) -> None:
    """Two commands that waited on the same hung server: the second to give up finds the first
    already started a new one. It kills only the server it joined (gone now), not the new one."""
    with open_embedded(tmp_path) as store:
        live = store._server.server_pid()
        ended = subprocess.Popen(["true"])
        ended.wait()
        store._server._pid = ended.pid  # the server it joined, killed by the other user
        store._server.kill()
        assert store._server.server_pid() == live
        assert store.execute("RETURN 1", write=False).rows == [[1]]
