"""Every reference in the README, docs/, docstrings and --help texts points at something real.

A clone holds only the repository: a link to a file outside it, a `docs/` page that was never
written, a CLI flag or a Spark conf key that does not exist all send a reader nowhere. These
tests read the texts as a reader would and check each reference against the checkout, the
click command tree and the listener's conf keys.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import click
import pytest
import yaml
from pydantic import BaseModel

from lineagegraph.cli import cli
from lineagegraph.settings import Settings
from lineagegraph.spark import SPARK_CONF, SPARK_CONF_PREFIXES

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
MARKDOWN = [README, ROOT / "CONTRIBUTING.md", *sorted(DOCS.glob("*.md"))]
README_MAX_LINES = 200
GENERATOR = ROOT / "scripts" / "gen_docs.py"
# Repository paths a text may name in backticks; config/ is left out on purpose: its examples
# name the user's own files (config/lineagegraph.toml, a copied price table).
REPO_DIRS = ("benchmarks", "cypher", "docs", "scripts", "src", "tests", "tools")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
DOCS_MENTION = re.compile(r"(?<![\w/.-])docs/[\w./-]*\w")
BACKTICKED_PATH = re.compile(rf"`((?:{'|'.join(REPO_DIRS)})/[\w./-]*\w)`")
LONG_FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")
CONF_KEY = re.compile(r"spark\.lineagegraph\.\w+")
SEPARATORS = ("&&", "||", "|", ";")


def tracked_text_files() -> list[Path]:
    names = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    suffixes = {".py", ".md", ".cypher", ".toml", ".sh", ".txt", ".yml", ".yaml", ".js", ".json"}
    return [ROOT / n for n in names if Path(n).suffix in suffixes and (ROOT / n).is_file()]


def without_code(markdown: str) -> str:
    return FENCE.sub("", markdown)


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", without_code(markdown), re.MULTILINE)}


# --- files and links ----------------------------------------------------------------------


def test_nothing_refers_outside_the_repository() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in tracked_text_files()
        if path != Path(__file__)
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if "DESIGN.md" in line or "../shared" in line
    ]
    assert not found, "references to files outside the repository:\n" + "\n".join(found)


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_markdown_links_resolve(doc: Path) -> None:
    text = doc.read_text()
    broken = []
    for target in LINK.findall(without_code(text)):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        file_part, _, anchor = target.partition("#")
        linked = (doc.parent / file_part).resolve() if file_part else doc
        if not linked.exists() or (ROOT not in linked.parents and linked != ROOT):
            broken.append(f"{target}: no such file in the repository")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked.read_text()):
            broken.append(f"{target}: no heading #{anchor} in {linked.relative_to(ROOT)}")
    assert not broken, f"{doc.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_named_repository_paths_exist() -> None:
    missing = []
    for path in tracked_text_files():
        text = path.read_text(errors="replace")
        named = set(DOCS_MENTION.findall(text))
        if path.suffix == ".md":
            named |= set(BACKTICKED_PATH.findall(without_code(text)))
        missing += [
            f"{path.relative_to(ROOT)}: {n}" for n in sorted(named) if not (ROOT / n).exists()
        ]
    assert not missing, "named paths that do not exist:\n" + "\n".join(missing)


def test_docs_pages_are_linked_from_the_readme() -> None:
    readme = (ROOT / "README.md").read_text()
    assert "](docs/README.md)" in readme
    index = (ROOT / "docs" / "README.md").read_text()
    pages = [p.name for p in MARKDOWN if p.parent == DOCS and p.name != "README.md"]
    unlisted = [name for name in pages if f"]({name})" not in index]
    assert not unlisted, f"docs/README.md does not list {unlisted}"


# --- CLI flags and listener conf keys -----------------------------------------------------


def commands(
    group: click.Command = cli, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], list[click.Command]]]:
    """Every command with its chain of groups: (("harvest", "s3"), [cli, harvest, s3])."""
    yield path, [group]
    if isinstance(group, click.Group):
        for name, sub in group.commands.items():
            for sub_path, chain in commands(sub, (*path, name)):
                yield sub_path, [group, *chain]


def options(chain: list[click.Command]) -> set[str]:
    return {o for c in chain for p in c.params for o in (*p.opts, *p.secondary_opts)}


def resolve(argv: list[str]) -> tuple[list[click.Command], list[str]]:
    """The command chain an argv after `lineagegraph` runs, and the long options it uses."""
    chain: list[click.Command] = [cli]
    used: list[str] = []
    tokens = iter(argv)
    descending = True
    for token in tokens:
        if token.startswith("--"):
            name = LONG_FLAG.match(token).group()  # type: ignore[union-attr]
            used.append(name)
            param = next((p for c in chain for p in c.params if name in p.opts), None)
            takes_value = isinstance(param, click.Option) and not param.is_flag
            if takes_value and "=" not in token:
                next(tokens, None)
        elif token.startswith("-") and len(token) == 2:
            param = next((p for c in chain for p in c.params if token in p.opts), None)
            if isinstance(param, click.Option) and not param.is_flag:
                next(tokens, None)
        elif descending and isinstance(chain[-1], click.Group) and token in chain[-1].commands:
            chain.append(chain[-1].commands[token])
        else:
            descending = False
    return chain, used


def lineagegraph_argvs(text: str) -> Iterator[tuple[str, list[str]]]:
    """(line, argv after the program) for each shell line that runs lineagegraph."""
    for line in text.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        starts = [i for i in range(len(words)) if i == 0 or words[i - 1] in SEPARATORS]
        for start in starts:
            if Path(words[start]).name == "lineagegraph":
                ends = [i for i in range(start + 1, len(words)) if words[i] in SEPARATORS]
                yield line.strip(), words[start + 1 : ends[0] if ends else len(words)]


def test_help_texts_name_only_real_flags() -> None:
    wrong = []
    for path, chain in commands():
        command = chain[-1]
        texts = [command.help or ""] + [getattr(p, "help", None) or "" for p in command.params]
        for text in texts:
            prose = "\n".join(line for line in text.splitlines() if "lineagegraph " not in line)
            wrong += [
                f"{' '.join(path) or 'lineagegraph'}: {flag}"
                for flag in LONG_FLAG.findall(prose)
                if flag not in options(chain) | subcommand_options(command)
            ]
            for line, argv in lineagegraph_argvs(text):
                wrong += bad_flags(line, argv)
    assert not wrong, "--help texts name flags their command does not have:\n" + "\n".join(wrong)


def subcommand_options(command: click.Command) -> set[str]:
    return {o for _, chain in commands(command) for o in options(chain)}


def bad_flags(line: str, argv: list[str]) -> list[str]:
    chain, used = resolve(argv)
    known = options(chain) | {"--help"}
    return [
        f"{line}: {flag} is not an option of {chain[-1].name}" for flag in used if flag not in known
    ]


def shell_blocks(markdown: str) -> list[str]:
    return [body for lang, body in FENCE.findall(markdown) if lang in ("", "bash", "sh")]


@pytest.mark.parametrize("doc", MARKDOWN, ids=lambda p: str(p.relative_to(ROOT)))
def test_documented_commands_use_real_subcommands_and_flags(doc: Path) -> None:
    wrong = []
    for block in shell_blocks(doc.read_text()):
        for line, argv in lineagegraph_argvs(block):
            wrong += bad_flags(line, argv)
    assert not wrong, "\n".join(wrong)


def test_listener_conf_keys_exist() -> None:
    unknown = [
        f"{path.relative_to(ROOT)}: {key}"
        for path in tracked_text_files()
        for key in sorted(set(CONF_KEY.findall(path.read_text(errors="replace"))))
        if key not in SPARK_CONF and f"{key}." not in SPARK_CONF_PREFIXES
    ]
    assert not unknown, "Spark conf keys the listener does not read:\n" + "\n".join(unknown)


# --- the README's commands run as printed -------------------------------------------------


def test_readme_commands_after_the_first_run_as_printed() -> None:
    """After the README's first block's install, every later command finds `lineagegraph`.

    The first block creates `.venv`; a later bare `lineagegraph` (or `python`, `pip`), in the
    README or on a docs page the README sends the reader to, only runs from the same shell
    when that block activated the virtualenv, else it must be named by its path in
    `.venv/bin/`, which pip creates from `[project.scripts]`.
    """
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert "lineagegraph" in scripts  # so pip puts .venv/bin/lineagegraph on the venv's PATH
    blocks = [b for doc in MARKDOWN for b in shell_blocks(doc.read_text()) if b.strip()]
    first = blocks[0]  # MARKDOWN starts with the README
    assert "python3 -m venv .venv" in first
    activated = re.search(r"(?:^|&&|;)\s*(?:source|\.) \.venv/bin/activate\b", first, re.MULTILINE)
    not_found = []
    for block in blocks:
        for line in block.splitlines():
            try:
                words = shlex.split(line, comments=True)
            except ValueError:
                continue
            programs = [w for i, w in enumerate(words) if i == 0 or words[i - 1] in SEPARATORS]
            if not activated and {"lineagegraph", "python", "pip"} & set(programs):
                not_found.append(line.strip())
    assert not not_found, (
        "commands that fail with 'command not found' after the first block:\n"
        + "\n".join(not_found)
    )


# --- the README stays short and opens with the two commands -----------------------------------

TWO_COMMANDS = """\
# 1. Install into a virtualenv, activate it (every `lineagegraph` command below runs in this
#    shell), and run the demo on the embedded store (no server to set up; Spark needs Java 17):
python3 -m venv .venv && source .venv/bin/activate
pip install '.[demo]' && lineagegraph demo

# 2. Run the tests (installs the test tools, starts the local test services):
bash scripts/test.sh
"""


def test_readme_is_at_most_200_lines() -> None:
    lines = len(README.read_text(encoding="utf-8").splitlines())
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines (at most {README_MAX_LINES}): move detail to a docs/ page"
    )


def test_readme_opens_with_the_two_commands() -> None:
    """The first code block is the install-and-demo command and the test command, as is."""
    blocks = FENCE.findall(README.read_text(encoding="utf-8"))
    assert blocks[0] == ("bash", TWO_COMMANDS)


# --- the site: generated pages, nav, mkdocs build -----------------------------------------


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_docs", GENERATOR)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("page", ["cli.md", "settings.md", "statements.md"])
def test_generated_page_is_fresh(page: str) -> None:
    built = generator().PAGES[page]()
    committed = (DOCS / page).read_text(encoding="utf-8")
    assert committed == built, f"docs/{page} is stale: run .venv/bin/python scripts/gen_docs.py"


def test_generated_pages_cover_every_command_setting_and_statement() -> None:
    cli_page = (DOCS / "cli.md").read_text(encoding="utf-8")
    missing = [
        " ".join(("lineagegraph", *path))
        for path, _ in commands()
        if f"\n## {' '.join(('lineagegraph', *path))}\n" not in cli_page
    ]
    settings_page = (DOCS / "settings.md").read_text(encoding="utf-8")
    for section, info in Settings.model_fields.items():
        model = info.annotation
        fields = (
            model.model_fields if isinstance(model, type) and issubclass(model, BaseModel) else {}
        )
        for key, field in fields.items():
            env = f"`LINEAGEGRAPH_{section.upper()}__{key.upper()}`"
            if env not in settings_page or not (field.description or "").strip():
                missing.append(f"[{section}] {key} (needs a description and its row)")
    statements_page = (DOCS / "statements.md").read_text(encoding="utf-8")
    missing += [
        f"cypher/{p.name}"
        for p in sorted((ROOT / "cypher").glob("*.cypher"))
        if f"\n## {p.stem}\n" not in statements_page or not p.read_text().startswith("//")
    ]
    assert not missing, "not in the generated reference:\n" + "\n".join(missing)


def test_every_docs_page_is_in_the_nav() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))

    def pages(items: list) -> Iterator[str]:
        for item in items:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            yield from pages(value) if isinstance(value, list) else [value]

    in_nav = list(pages(config["nav"]))
    on_disk = sorted(p.name for p in DOCS.glob("*.md"))
    assert sorted(in_nav) == on_disk, "mkdocs.yml's nav and docs/*.md differ"


def test_docs_holds_only_pages_and_the_pictures_they_show() -> None:
    texts = "".join(p.read_text(encoding="utf-8") for p in DOCS.glob("*.md"))
    unused = [p.name for p in DOCS.iterdir() if p.suffix != ".md" and f"]({p.name})" not in texts]
    assert not unused, f"files in docs/ no page shows (the site would publish them): {unused}"


def test_mkdocs_build_strict(tmp_path: Path) -> None:
    """The site builds with no warning: a broken link or anchor, or a page left out, fails."""
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "site" / "index.html").is_file()


# --- exit codes and tips as the first hour meets them (issue 22) ----------------------------


def _exit_code_classes() -> dict[int, list[str]]:
    from lineagegraph import errors

    codes: dict[int, list[str]] = {}
    for value in vars(errors).values():
        if isinstance(value, type) and issubclass(value, errors.LineageGraphError):
            codes.setdefault(value.exit_code, []).append(value.__name__)
    return codes


@pytest.mark.parametrize("page", [README, DOCS / "commands.md"], ids=lambda p: p.name)
def test_every_exit_code_is_in_the_table(page: Path) -> None:
    """A user's mistake has its own code (2, or 7 for no such asset), never 1 (a bug), and the
    tables say what each code means."""
    rows = set(re.findall(r"^\| (\d+) \| ", page.read_text(encoding="utf-8"), re.MULTILINE))
    missing = {code: names for code, names in _exit_code_classes().items() if str(code) not in rows}
    assert missing == {}, f"{page.name}: exit codes without a row"
    from lineagegraph.questions.lineage import AssetDeleted, AssetNotFound

    assert AssetNotFound.exit_code == AssetDeleted.exit_code == 7


def test_the_async_http_tip_says_to_close_the_client() -> None:
    """openlineage-python's async_http transport drops what is still queued at exit unless the
    client is closed: each place that suggests it says so within a few lines."""
    for page in [*sorted(DOCS.glob("*.md")), README]:
        lines = page.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            if "TRANSPORT__TYPE=async_http" in line:
                near = "\n".join(lines[i : i + 8])
                assert "close()" in near, f"{page.name}:{i + 1}: async_http without close()"
