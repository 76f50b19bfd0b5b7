"""The import layering of src/lineagegraph: nothing imports upward, no modules import each other
in a loop.

Every module is parsed with `ast` (nothing is imported). Runtime imports count, those inside a
function too; imports under `if TYPE_CHECKING:` do not (they never run). A module belongs to the
layer of the longest name in LAYERS that is it or a package above it; it may import its own
layer and those below, and never so that modules import each other in a loop.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "lineagegraph"

# Lowest first. A module imports only modules of its own layer or of layers listed before it.
LAYERS: list[tuple[str, list[str]]] = [
    (
        "base values",
        [
            "lineagegraph",  # the package alone: its __version__ (its API facade: see FACADE)
            "lineagegraph.errors",
            "lineagegraph.logs",
            "lineagegraph.model",
            "lineagegraph.identity",
            "lineagegraph.jsonlines",
            "lineagegraph.settings_base",  # what every settings section shares
            "lineagegraph.output",
            "lineagegraph.gc_pause",
            "lineagegraph.processes",
            "lineagegraph.column_links",
            "lineagegraph.values",  # shared values of harvest and reports (globs, pricing)
            "lineagegraph.masking",  # functions that mask, for every source's column lineage
            "lineagegraph.schemas",  # schema versions: folding sightings, changes between them
        ],
    ),
    (
        # Each source's section sits beside its code but below it; the root composes them.
        # (Their packages' __init__ load nothing else: tests/test_settings.py checks.)
        "settings",
        [
            "lineagegraph.graph.settings",
            "lineagegraph.spark.settings",
            "lineagegraph.harvest.s3.settings",
            "lineagegraph.harvest.snowflake.settings",
            "lineagegraph.harvest.dbt.settings",
            "lineagegraph.harvest.openlineage_settings",
            "lineagegraph.tags_settings",
            "lineagegraph.harvest.kafka_settings",
            "lineagegraph.alerts_settings",
            "lineagegraph.settings",
        ],
    ),
    ("graph", ["lineagegraph.graph", "lineagegraph.store_check"]),
    # The harvest loop sits below the Spark agent, which records its own long-running run.
    ("harvest loop", ["lineagegraph.pipeline"]),
    ("spark agent", ["lineagegraph.spark"]),  # runs in the driver: nothing of harvest/
    ("harvest", ["lineagegraph.harvest"]),
    (
        "questions and reports",
        [
            "lineagegraph.questions",
            "lineagegraph.render",
            "lineagegraph.reports",
        ],
    ),
    # Alert delivery: the state of alerts and the receivers they are sent to.
    ("notify", ["lineagegraph.notify"]),
    ("serve", ["lineagegraph.serve"]),
    ("api", ["lineagegraph.api"]),
    ("demo", ["lineagegraph.demo"]),  # `lineagegraph demo` runs it
    ("cli", ["lineagegraph.cli"]),
]

# (importer, imported): upward imports allowed on purpose, each with why.
FACADE = {
    # `lineagegraph.upstream` etc. import the API on first use (a function-level import in
    # the package's __getattr__), never when the package is imported.
    ("lineagegraph", "lineagegraph.api"),
}
# Upward imports that another change in flight removes: delete each entry when it lands.
# An entry that matches no import any more fails the test, so none outlives its move.
PENDING: set[tuple[str, str]] = set()


@dataclass(frozen=True)
class Import:
    module: str
    line: int
    target: str

    def __str__(self) -> str:
        return f"{self.module}:{self.line} imports {self.target}"


def modules(src: Path = SRC) -> dict[str, Path]:
    """Every module and package of lineagegraph by dotted name."""
    found = {}
    for path in sorted((src / PACKAGE).rglob("*.py")):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _runtime_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """Every node below `node` except the bodies of `if TYPE_CHECKING:` (their else runs)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            for other in child.orelse:
                yield other
                yield from _runtime_nodes(other)
            continue
        yield child
        yield from _runtime_nodes(child)


def imports_of(name: str, path: Path, known: dict[str, Path]) -> list[Import]:
    """The lineagegraph modules `name` imports at run time, each with its line."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in _runtime_nodes(ast.parse(path.read_text(), str(path))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*up, base] if base else up)
            # `from pkg import mod` imports the module mod; `from mod import name` imports mod
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base
                for alias in node.names
            ]
        for target in dict.fromkeys(targets):
            if target in known and target != name:
                found.append(Import(name, node.lineno, target))
    return found


def import_graph(src: Path = SRC) -> list[Import]:
    known = modules(src)
    return [found for name, path in known.items() for found in imports_of(name, path, known)]


def layer_of(module: str) -> int | None:
    """The index in LAYERS of the longest listed name that is `module` or a package above it
    (the bare package name only for itself)."""
    matches = [
        (len(listed), index)
        for index, (_, names) in enumerate(LAYERS)
        for listed in names
        if module == listed or (listed != PACKAGE and module.startswith(listed + "."))
    ]
    return max(matches)[1] if matches else None


def upward(edges: list[Import]) -> list[Import]:
    """Imports of a module of a higher layer than the importer's."""
    found = []
    for edge in edges:
        low, high = layer_of(edge.module), layer_of(edge.target)
        if low is not None and high is not None and high > low:
            found.append(edge)
    return found


def cycles(edges: list[Import]) -> list[list[str]]:
    """Modules that import each other in a loop: the strongly connected components of more
    than one module (Tarjan's algorithm, iterative)."""
    graph: dict[str, list[str]] = {}
    for edge in edges:
        graph.setdefault(edge.module, []).append(edge.target)
        graph.setdefault(edge.target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(graph[child])))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return components


def _named(edge: Import) -> str:
    low, high = layer_of(edge.module), layer_of(edge.target)
    assert low is not None and high is not None
    return f"{edge} ({LAYERS[low][0]} -> {LAYERS[high][0]})"


def test_every_module_has_a_layer() -> None:
    missing = [name for name in modules() if layer_of(name) is None]
    assert not missing, f"modules with no layer in LAYERS (tests/test_layers.py): {missing}"


def test_no_module_imports_a_higher_layer() -> None:
    found = upward(import_graph())
    allowed = FACADE | PENDING
    wrong = [_named(edge) for edge in found if (edge.module, edge.target) not in allowed]
    assert not wrong, "upward imports:\n  " + "\n  ".join(wrong)


def test_every_allowed_upward_import_still_exists() -> None:
    """An allow-list entry whose import is gone (the move landed) is deleted, not kept."""
    found = {(edge.module, edge.target) for edge in upward(import_graph())}
    stale = sorted((FACADE | PENDING) - found)
    assert not stale, f"allowed upward imports that no longer exist, delete them: {stale}"


def test_no_modules_import_each_other_in_a_loop() -> None:
    edges = import_graph()
    found = cycles(edges)
    described = []
    for component in found:
        inside = [str(e) for e in edges if e.module in component and e.target in component]
        described.append(" <-> ".join(component) + ":\n    " + "\n    ".join(inside))
    assert not found, "import cycles:\n  " + "\n  ".join(described)


def test_the_checks_find_what_they_look_for(tmp_path: Path) -> None:
    """On a made-up package: a cycle through a function-level import and an upward import are
    named with their lines; a TYPE_CHECKING import is neither."""
    package = tmp_path / PACKAGE
    (package / "graph").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "graph" / "__init__.py").write_text("")
    (package / "model.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from lineagegraph.graph import writer\n"
        "from lineagegraph import errors\n"
    )
    (package / "errors.py").write_text("def late():\n    from lineagegraph.model import x\n")
    (package / "graph" / "writer.py").write_text("from ..questions import RANK\n")
    (package / "questions.py").write_text("import lineagegraph.graph.writer\n")
    edges = import_graph(tmp_path)
    assert sorted(map(str, edges)) == [
        "lineagegraph.errors:2 imports lineagegraph.model",
        "lineagegraph.graph.writer:1 imports lineagegraph.questions",
        "lineagegraph.model:4 imports lineagegraph.errors",
        "lineagegraph.questions:1 imports lineagegraph.graph.writer",
    ]
    assert sorted(cycles(edges)) == [
        ["lineagegraph.errors", "lineagegraph.model"],
        ["lineagegraph.graph.writer", "lineagegraph.questions"],
    ]
    assert [str(e) for e in upward(edges)] == [
        "lineagegraph.graph.writer:1 imports lineagegraph.questions"
    ]
