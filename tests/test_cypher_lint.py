"""Every statement in cypher/*.cypher is valid Neo4j 5 Cypher and keeps to the portable subset.

No Neo4j server runs here, so validity is checked with Neo4j's own Cypher front end (parser and
semantic analysis) from npm, driven by tools/cypher-lint/lint.js in a single Node process.
Install it with `npm ci --prefix tools/cypher-lint` (CI does); without it these tests fail.

Portability (docs/graph-model.md) is checked with simple patterns on the statement text with
comments and string literals blanked out.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CYPHER_DIR = REPO / "cypher"
LINT_DIR = REPO / "tools" / "cypher-lint"
LINT_JS = LINT_DIR / "lint.js"
LINT_PACKAGE = "@neo4j-cypher/language-support"
INSTALL_HINT = "run `npm ci --prefix tools/cypher-lint` (needs Node >= 20 and npm)"
SCHEMA_STEMS = frozenset({"schema.falkordb", "schema.neo4j"})
SELFTEST_PREFIX = "selftest/"  # cannot clash with statement names: file stems hold no "/"


class CypherLintWarning(UserWarning):
    """A warning from Neo4j's front end (deprecation, cartesian product, ...): reported only."""


@dataclass(frozen=True)
class Statement:
    name: str
    path: Path
    text: str
    first_line: int  # 1-based line of `path` on which `text` starts
    is_schema: bool

    def location(self, line: int, column: int) -> str:
        """`path:line:column` in the file for a 1-based position inside `text`."""
        return f"{_display(self.path)}:{self.first_line + line - 1}:{column}"


@dataclass(frozen=True)
class Diagnostic:
    message: str
    severity: str  # "error" | "warning" | "information" | "hint"
    line: int  # 1-based, relative to the linted text
    column: int  # 1-based


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO))
    except ValueError:
        return str(path)


# --- comments and strings -------------------------------------------------------------------


def blank_comments_and_strings(text: str) -> str:
    """`text` with comments and the insides of string literals and backticked names replaced by
    spaces; newlines and offsets are kept, so positions still map onto `text`."""
    out = list(text)

    def blank(start: int, end: int) -> None:
        for k in range(start, min(end, len(text))):
            if out[k] not in "\r\n":
                out[k] = " "

    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end == -1 else end
            blank(i, end)
            i = end
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end == -1 else end + 2
            blank(i, end)
            i = end
        elif char in "'\"`":
            j = i + 1
            while j < n:
                if text[j] == "\\" and char != "`":
                    j += 2
                    continue
                if text[j] == char:
                    if char == "`" and text.startswith("``", j):
                        j += 2
                        continue
                    break
                j += 1
            blank(i + 1, j)
            i = j + 1
        else:
            i += 1
    return "".join(out)


# --- collecting statements ------------------------------------------------------------------

# A `;` ending a line (comments after it are blanked) separates statements in schema files.
_SCHEMA_SEPARATOR = re.compile(r";[ \t]*(?:\r?\n|\Z)")


def _split_schema(text: str) -> list[tuple[int, str]]:
    """(1-based first line, text) of each non-empty statement of a schema file."""
    blanked = blank_comments_and_strings(text)
    chunks: list[tuple[int, str]] = []
    start = 0
    ends = [(m.start(), m.end()) for m in _SCHEMA_SEPARATOR.finditer(blanked)]
    for chunk_end, next_start in [*ends, (len(text), len(text))]:
        if blanked[start:chunk_end].strip():
            chunks.append((text.count("\n", 0, start) + 1, text[start:chunk_end]))
        start = next_start
    return chunks


def collect_statements(directory: Path) -> list[Statement]:
    """The statements of `directory`/*.cypher, named by file stem; schema files
    (schema.<backend>.cypher) hold several statements, named `<stem>#1`, `<stem>#2`, ..."""
    statements: list[Statement] = []
    if not directory.is_dir():
        return statements
    for path in sorted(directory.glob("*.cypher")):
        text = path.read_text(encoding="utf-8")
        stem = path.name.removesuffix(".cypher")
        if stem in SCHEMA_STEMS:
            for index, (first_line, chunk) in enumerate(_split_schema(text), start=1):
                statements.append(Statement(f"{stem}#{index}", path, chunk, first_line, True))
        else:
            statements.append(Statement(stem, path, text, 1, False))
    return statements


# --- running Neo4j's front end --------------------------------------------------------------


def _lint_tool_problem() -> str | None:
    """Why lint.js cannot run here, or None."""
    if shutil.which("node") is None:
        return "`node` is not on PATH"
    manifest = LINT_DIR / "node_modules" / LINT_PACKAGE / "package.json"
    if not manifest.is_file():
        return f"{_display(manifest.parent)} is missing"
    pinned = json.loads((LINT_DIR / "package.json").read_text())["dependencies"][LINT_PACKAGE]
    installed = json.loads(manifest.read_text())["version"]
    if installed != pinned:
        return f"{LINT_PACKAGE} {installed} is installed but package.json pins {pinned}"
    return None


def lint_texts(items: Sequence[tuple[str, str]]) -> dict[str, list[Diagnostic]]:
    """Lint (name, text) pairs in one `node lint.js` run; fails the test if it cannot run."""
    problem = _lint_tool_problem()
    if problem:
        pytest.fail(f"Cannot check Cypher with Neo4j's front end: {problem}; {INSTALL_HINT}.")
    payload = json.dumps([{"name": name, "text": text} for name, text in items])
    node = shutil.which("node")
    assert node is not None
    proc = subprocess.run(
        [node, str(LINT_JS)],
        input=payload,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=120 + 2 * len(items),
        check=False,
    )
    if proc.returncode != 0:
        pytest.fail(f"lint.js exited with {proc.returncode}:\n{proc.stderr}", pytrace=False)
    results = json.loads(proc.stdout)
    names = [name for name, _ in items]
    assert [r["name"] for r in results] == names, "lint.js answered for other statements"
    return {r["name"]: [Diagnostic(**d) for d in r["diagnostics"]] for r in results}


# --- portability ----------------------------------------------------------------------------

_NOT_AFTER = r"(?<![\w$.:`])"  # not part of a name, property key, label or parameter
_PORTABILITY_RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(_NOT_AFTER + r"EXISTS\s*\{", re.I),
        "`EXISTS { }` subquery: FalkorDB has none; use a pattern predicate "
        "`(a)-[:R]->()` / `NOT (a)-[:R]->()`",
    ),
    (
        re.compile(_NOT_AFTER + r"(?:COUNT|COLLECT)\s*\{", re.I),
        "`COUNT { }` / `COLLECT { }` subquery: FalkorDB has none; use OPTIONAL MATCH with "
        "count() / collect()",
    ),
    (
        re.compile(_NOT_AFTER + r"CALL\s*(?:\([^()]*\)\s*)?\{", re.I),
        "`CALL { }` subquery: FalkorDB has none; split the statement or use WITH / UNWIND",
    ),
    (
        re.compile(_NOT_AFTER + r"datetime\s*(?:\(|\.\s*\w+\s*\()", re.I),
        "`datetime()`: FalkorDB has no temporal values; store epoch millis (`timestamp()`)",
    ),
    (
        re.compile(r"\$\s*(?:any|all)?\s*\(", re.I),
        "dynamic label or relationship type `$(...)`: not in FalkorDB; labels must be literal",
    ),
    (
        re.compile(_NOT_AFTER + r"apoc\s*\.", re.I),
        "APOC procedure/function: not on FalkorDB (nor on every Neo4j)",
    ),
]
_SHORTEST_PATH = re.compile(_NOT_AFTER + r"shortestPath\s*\(", re.I)
# Clause keywords; the one before a shortestPath( says which clause it is in.
_CLAUSE = re.compile(
    _NOT_AFTER + r"(MATCH|WITH|RETURN|UNWIND|CREATE|MERGE|SET|DELETE|REMOVE|FOREACH|CALL|"
    r"YIELD|UNION)\b",
    re.I,
)
_STARTS_ENDS_WITH = re.compile(r"\b(STARTS|ENDS)(\s+)WITH\b", re.I)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def portability_violations(text: str) -> list[tuple[int, str]]:
    """(1-based line, problem) for each construct outside the Neo4j 5 / FalkorDB subset."""
    code = blank_comments_and_strings(text)
    found: list[tuple[int, str]] = []
    for pattern, problem in _PORTABILITY_RULES:
        found.extend((_line_of(code, m.start()), problem) for m in pattern.finditer(code))
    # `STARTS WITH` / `ENDS WITH` are operators, not WITH clauses.
    clauses = _STARTS_ENDS_WITH.sub(lambda m: m.group(1) + m.group(2) + "    ", code)
    for match in _SHORTEST_PATH.finditer(clauses):
        before = list(_CLAUSE.finditer(clauses, 0, match.start()))
        clause = before[-1].group(1).upper() if before else "(no clause)"
        if clause not in ("WITH", "RETURN"):
            found.append(
                (
                    _line_of(code, match.start()),
                    f"`shortestPath` in {clause}: FalkorDB takes it only inside WITH / RETURN "
                    "(`MATCH (a ...), (b ...) WITH shortestPath((a)-[*..N]->(b)) AS p ...`)",
                )
            )
    return sorted(found)


def shape_problems(statement: Statement) -> list[str]:
    """A statement file holds exactly one statement (a trailing `;` is allowed)."""
    code = blank_comments_and_strings(statement.text)
    if not code.strip(" \t\r\n;"):
        return ["holds no statement"]
    extra = re.search(r";\s*[^\s;]", code)
    if extra:
        return [
            f"{statement.location(_line_of(code, extra.start()), 1)}: a second statement "
            "follows `;` (one statement per file; schema files end each with `;` at a line end)"
        ]
    return []


# --- fixtures -------------------------------------------------------------------------------

REPO_STATEMENTS = collect_statements(CYPHER_DIR)

# Statements that must not pass: if any of these comes back clean, the check is not working.
BROKEN_STATEMENTS: dict[str, tuple[str, str]] = {
    "syntax": ("MATCH (n RETURN n", "Invalid input"),
    "undefined_variable": ("MATCH (n) RETURN m", "Variable `m` not defined"),
    "unknown_function": ("RETURN nosuchfn(1)", "Function nosuchfn is not present"),
    "argument_count": ("RETURN toUpper('a', 'b')", "Too many parameters"),
    "unknown_procedure": ("CALL nosuch.proc()", "Procedure nosuch.proc is not present"),
    "console_command": (":param x => 1", "Console commands are unsupported"),
}

# Must come back without diagnostics: parameters and labels, types and keys unknown to the
# linter's mock schema are not problems.
CLEAN_STATEMENT = (
    "UNWIND $rows AS r\n"
    "MERGE (f:Asset:File {urn: r.urn})\n"
    "ON CREATE SET f += r.props, f.first_seen = timestamp()\n"
    "WITH f, r\n"
    "MATCH (d:Asset:Dataset {urn: $dataset})\n"
    "MERGE (f)-[e:PART_OF]->(d)\n"
    "RETURN count(e) AS edges, collect(f.urn)[..$limit] AS sample"
)

# A sample cypher/ directory, run through the same collector as the real one.
SAMPLE_FILES = {
    "merge_sample.cypher": "// Upsert files.\n" + CLEAN_STATEMENT + "\n",
    "broken_sample.cypher": "// Uses b, never bound.\nMATCH (a:Asset)\nRETURN b.urn\n",
    "schema.neo4j.cypher": (
        "// Neo4j schema.\n"
        "CREATE CONSTRAINT asset_urn IF NOT EXISTS\n"
        "FOR (a:Asset) REQUIRE a.urn IS UNIQUE;\n"
        "\n"
        "CREATE INDEX asset_kind IF NOT EXISTS FOR (a:Asset) ON (a.kind); // trailing note\n"
        "CREATE INDEX asset_name IF NOT EXISTS FOR (a:Asset) ON (a.nme);\n"
    ),
    "schema.falkordb.cypher": "CREATE INDEX FOR (a:Asset) ON (a.urn)\n",
    "not_cypher.txt": "MATCH (n RETURN n\n",
}


@dataclass(frozen=True)
class LintRun:
    repo: dict[str, list[Diagnostic]]
    selftest: dict[str, list[Diagnostic]]
    samples: list[Statement]


@pytest.fixture(scope="module")
def lint_run(tmp_path_factory: pytest.TempPathFactory) -> LintRun:
    """One Node process lints the repo's statements and the self-test statements."""
    sample_dir = tmp_path_factory.mktemp("cypher")
    for file_name, text in SAMPLE_FILES.items():
        (sample_dir / file_name).write_text(text, encoding="utf-8")
    samples = collect_statements(sample_dir)
    selftest: list[tuple[str, str]] = [
        *((name, text) for name, (text, _) in BROKEN_STATEMENTS.items()),
        ("clean", CLEAN_STATEMENT),
        *((f"sample/{s.name}", s.text) for s in samples),
    ]
    results = lint_texts(
        [(s.name, s.text) for s in REPO_STATEMENTS]
        + [(SELFTEST_PREFIX + name, text) for name, text in selftest]
    )
    return LintRun(
        repo={k: v for k, v in results.items() if not k.startswith(SELFTEST_PREFIX)},
        selftest={
            k.removeprefix(SELFTEST_PREFIX): v
            for k, v in results.items()
            if k.startswith(SELFTEST_PREFIX)
        },
        samples=samples,
    )


def _format(statement: Statement, diagnostics: Iterable[Diagnostic]) -> str:
    return "\n".join(
        f"  {statement.location(d.line, d.column)}: {d.severity}: {d.message}" for d in diagnostics
    )


def check_statement(statement: Statement, diagnostics: list[Diagnostic]) -> None:
    """Fail on errors; report warnings (Neo4j notifications) as CypherLintWarning."""
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        pytest.fail(
            f"statement `{statement.name}` is not valid Neo4j 5 Cypher "
            f"(Neo4j's Cypher front end says):\n{_format(statement, diagnostics)}",
            pytrace=False,
        )
    if diagnostics:
        warnings.warn(
            f"statement `{statement.name}`:\n{_format(statement, diagnostics)}",
            CypherLintWarning,
            stacklevel=2,
        )


# --- the repository's statements ------------------------------------------------------------


def test_cypher_dir_is_not_empty() -> None:
    assert REPO_STATEMENTS, f"no statements in {_display(CYPHER_DIR)}/*.cypher"


@pytest.mark.parametrize("statement", REPO_STATEMENTS, ids=[s.name for s in REPO_STATEMENTS])
def test_statement_is_valid_neo4j_cypher(lint_run: LintRun, statement: Statement) -> None:
    check_statement(statement, lint_run.repo[statement.name])


@pytest.mark.parametrize("statement", REPO_STATEMENTS, ids=[s.name for s in REPO_STATEMENTS])
def test_statement_is_portable(statement: Statement) -> None:
    problems = [
        f"  {statement.location(line, 1)}: {problem}"
        for line, problem in portability_violations(statement.text)
    ]
    assert not problems, (
        f"statement `{statement.name}` leaves the Neo4j 5 / FalkorDB subset "
        "(docs/graph-model.md):\n" + "\n".join(problems)
    )


@pytest.mark.parametrize("statement", REPO_STATEMENTS, ids=[s.name for s in REPO_STATEMENTS])
def test_statement_file_holds_one_statement(statement: Statement) -> None:
    problems = shape_problems(statement)
    assert not problems, f"{_display(statement.path)}: " + "; ".join(problems)


# --- the checks themselves ------------------------------------------------------------------


@pytest.mark.parametrize("case", sorted(BROKEN_STATEMENTS))
def test_linter_rejects_broken_statement(lint_run: LintRun, case: str) -> None:
    text, expected = BROKEN_STATEMENTS[case]
    errors = [d for d in lint_run.selftest[case] if d.severity == "error"]
    assert errors, f"Neo4j's front end let {text!r} through: the Cypher check is not working"
    assert any(expected in d.message for d in errors), errors


def test_linter_ignores_parameters_and_unknown_schema_names(lint_run: LintRun) -> None:
    assert lint_run.selftest["clean"] == []


def test_linter_on_sample_directory(lint_run: LintRun) -> None:
    by_name = {s.name: s for s in lint_run.samples}
    assert sorted(by_name) == [
        "broken_sample",
        "merge_sample",
        "schema.falkordb#1",
        "schema.neo4j#1",
        "schema.neo4j#2",
        "schema.neo4j#3",
    ]
    schema = [by_name[f"schema.neo4j#{i}"] for i in (1, 2, 3)]
    assert [s.first_line for s in schema] == [1, 4, 6]
    assert schema[0].text.rstrip().endswith("a.urn IS UNIQUE")
    assert all(s.is_schema for s in schema)

    diagnostics = {s.name: lint_run.selftest[f"sample/{s.name}"] for s in lint_run.samples}
    broken = by_name["broken_sample"]
    assert [(d.severity, d.message) for d in diagnostics.pop("broken_sample")] == [
        ("error", "Variable `b` not defined")
    ]
    [error] = lint_run.selftest["sample/broken_sample"]
    assert broken.location(error.line, error.column).endswith("broken_sample.cypher:3:8")
    assert diagnostics == {name: [] for name in diagnostics}

    with pytest.raises(pytest.fail.Exception, match="Variable `b` not defined"):
        check_statement(broken, lint_run.selftest["sample/broken_sample"])


def test_collector_on_missing_directory(tmp_path: Path) -> None:
    assert collect_statements(tmp_path / "nope") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("MATCH (a) WHERE EXISTS { (a)-[:FEEDS]->() } RETURN a", "EXISTS { }"),
        ("MATCH (a) WHERE exists{(a)-->()} RETURN a", "EXISTS { }"),
        ("MATCH (a) RETURN COUNT { (a)-->() } AS n", "COUNT { }"),
        ("MATCH (a) CALL { WITH a RETURN 1 AS x } RETURN x", "CALL { }"),
        ("MATCH (a) CALL (a) { RETURN 1 AS x } RETURN x", "CALL { }"),
        ("RETURN datetime() AS now", "datetime()"),
        ("RETURN datetime.fromepochmillis(0) AS t", "datetime()"),
        ("MERGE (n:$($label) {urn: $urn}) RETURN n", "dynamic label"),
        ("MATCH (n)-[r:$any($types)]->() RETURN r", "dynamic label"),
        ("CALL apoc.create.addLabels(n, $labels)", "APOC"),
        ("MATCH p = shortestPath((a)-[*..5]->(b)) RETURN p", "shortestPath` in MATCH"),
        ("OPTIONAL MATCH p = shortestPath((a)-[*..5]->(b)) RETURN p", "in MATCH"),
        (
            "MATCH (a), (b) WHERE a.urn STARTS WITH 'x' AND shortestPath((a)-[*..3]->(b)) "
            "IS NOT NULL RETURN a",
            "in MATCH",
        ),
    ],
)
def test_portability_check_catches(text: str, expected: str) -> None:
    problems = [problem for _, problem in portability_violations(text)]
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize(
    "text",
    [
        "// MATCH (a) WHERE EXISTS { (a)-->() } RETURN datetime()\nMATCH (a) RETURN a",
        "/* CALL { } and $(label) */ MATCH (a) RETURN a",
        "MATCH (a) WHERE a.note = 'EXISTS { x } datetime() apoc.x' RETURN a.`count {`",
        "MATCH (a:Asset {urn: $a}), (b:Asset {urn: $b})\n"
        "WITH shortestPath((a)-[:FEEDS*..10]->(b)) AS p RETURN p",
        "MATCH (a), (b) RETURN shortestPath((a)-[*..3]->(b)) AS p",
        "MATCH p = allShortestPaths((a)-[*..3]->(b)) RETURN p",
        "MATCH (n) WHERE n.exists = 1 AND n.datetime = $datetime RETURN count(*) AS n",
        "MATCH (n) WHERE NOT (n)-[:FEEDS]->() RETURN n",
    ],
)
def test_portability_check_accepts(text: str) -> None:
    assert portability_violations(text) == []


def test_shape_check() -> None:
    def statement(text: str) -> Statement:
        return Statement("s", CYPHER_DIR / "s.cypher", text, 1, False)

    assert shape_problems(statement("MATCH (n) RETURN n;\n")) == []
    assert shape_problems(statement("RETURN ';' AS x // ; MATCH")) == []
    assert shape_problems(statement("// nothing\n")) == ["holds no statement"]
    [problem] = shape_problems(statement("MATCH (n) RETURN n;\nMATCH (m) RETURN m"))
    assert "cypher/s.cypher:1:1: a second statement" in problem
