"""Pictures and text of lineage answers; the HTML page is opened in a real headless Chromium."""

from __future__ import annotations

import json
import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
import zlib
from collections import Counter
from pathlib import Path

import pytest

from lineagegraph.questions.lineage import Impact, LineagePath, Reached, Reader
from lineagegraph.render.as_json import to_json
from lineagegraph.render.diagrams import to_dot, to_mermaid
from lineagegraph.render.html_page import to_html
from lineagegraph.render.svg import layout, to_svg
from lineagegraph.render.text import reached_table, tree
from lineagegraph.render.views import (
    MAX_PICTURE_NODES,
    View,
    impact_view,
    label,
    paths_view,
    short,
    traversal_view,
    trim,
)

START = Reached("s3://raw/orders", "orders", "s3", "Dataset", 0)
STAGED = Reached(
    "s3://lake/staging/orders", "orders", "s3", "Dataset", 1, ("spark://job",), ("s3://raw/orders",)
)
TABLE = Reached(
    "snowflake://acme/RAW.PUBLIC.ORDERS",
    "ORDERS",
    "snowflake",
    "Table",
    2,
    ("snowflake://acme/query/copy",),
    ("s3://lake/staging/orders",),
)
# A name made to break every format that forgets to escape.
NASTY = Reached(
    'snowflake://acme/DB.S."<b>a&\\"#x;</b>"',
    '<b>a&\\"#x;</b>',
    "snowflake",
    "Table",
    3,
    (),
    ("snowflake://acme/RAW.PUBLIC.ORDERS",),
    deleted_at=5,
)
DOWNSTREAM = [STAGED, TABLE, NASTY]


def view() -> View:
    return traversal_view(START, DOWNSTREAM, "downstream")


# --- views ----------------------------------------------------------------------------------


def test_traversal_view_levels_and_edges() -> None:
    down = view()
    assert [(n.name, n.level, n.start) for n in down.nodes][:3] == [
        ("raw/orders", 0, True), ("lake/staging/orders", 1, False),
        ("RAW.PUBLIC.ORDERS", 2, False),
    ]  # fmt: skip
    assert [(e.src, e.dst, e.dashed) for e in down.edges][:2] == [
        (START.urn, STAGED.urn, False),
        (STAGED.urn, TABLE.urn, False),
    ]
    up = traversal_view(
        TABLE, [Reached(STAGED.urn, "orders", "s3", "Dataset", 1, (), (TABLE.urn,))], "upstream"
    )
    # Upstream sits left of the start; edges still point the way data flows.
    assert [n.level for n in up.nodes] == [0, -1]
    assert [(e.src, e.dst) for e in up.edges] == [(STAGED.urn, TABLE.urn)]


def test_links_are_drawn_but_not_in_the_tree() -> None:
    other = Reached("s3://b/other", "other", "s3", "Dataset", 1, (), (START.urn,))
    table = Reached(
        TABLE.urn, "ORDERS", "snowflake", "Table", 1, (), (START.urn,), linked_from=(other.urn,)
    )
    result = traversal_view(START, [other, table], "downstream")
    link = next(e for e in result.edges if e.link)
    assert (link.src, link.dst, link.dashed) == (other.urn, TABLE.urn, False)
    assert to_mermaid(result).count("-->") == 3
    assert "(see above)" not in tree(result)


def test_indirect_edges_are_dashed() -> None:
    # TABLE filtered down to connect straight to the start, two levels away.
    table = Reached(TABLE.urn, "ORDERS", "snowflake", "Table", 2, (), (START.urn,))
    [edge] = traversal_view(START, [table], "downstream").edges
    assert edge.dashed


def test_paths_view_points_every_edge_forward() -> None:
    a, b, c, d = (Reached(f"s3://b/{n}", n, "s3", "Dataset", 0) for n in "abcd")
    short = LineagePath(2, (a, c, d), ((), ()))
    long = LineagePath(3, (a, b, c, d), ((), (), ("job",)))
    result = paths_view([short, long], a, d)
    level = {n.urn: n.level for n in result.nodes}
    assert level == {a.urn: 0, b.urn: 1, c.urn: 2, d.urn: 3}
    assert all(level[e.dst] > level[e.src] for e in result.edges)
    assert {e.via for e in result.edges if e.dst == d.urn} == {("job",)}


def test_impact_view_places_readers_after_what_they_read() -> None:
    reader = Reader(
        "snowflake://acme/query/dash", "dash", "snowflake", "bi", 3, 10, (TABLE.urn, STAGED.urn)
    )
    result = impact_view(Impact(START, [STAGED, TABLE], {}, [reader]))
    node = result.by_urn[reader.urn]
    assert (node.kind, node.level) == ("Transformation", 3)
    assert {(e.src, e.dashed) for e in result.edges if e.dst == reader.urn} == {
        (TABLE.urn, True),
        (STAGED.urn, True),
    }


def test_transformation_pills_say_what_they_write() -> None:
    writer = Reader("spark://etl", "etl", "spark", None, 1, 10, (STAGED.urn,), (TABLE.urn,))
    dashboard = Reader(
        "snowflake://acme/query/dash", "dash", "snowflake", "bi", 3, 10, (TABLE.urn,)
    )
    result = impact_view(Impact(START, [STAGED, TABLE], {}, [writer, dashboard]))
    assert result.by_urn[writer.urn].detail == "writes RAW.PUBLIC.ORDERS"
    assert result.by_urn[dashboard.urn].detail == "writes nothing (reads only)"
    svg = to_svg(result)
    assert ">writes RAW.PUBLIC.ORDERS</text>" in svg and ">writes nothing (reads only)<" in svg
    assert "writes RAW.PUBLIC.ORDERS" in to_mermaid(result)
    many = Reader("spark://x", "x", "spark", None, 1, 10, (STAGED.urn,), (TABLE.urn, "s3://o/p"))
    [node] = [
        n
        for n in impact_view(Impact(START, [STAGED, TABLE], {}, [many])).nodes
        if n.urn == many.urn
    ]
    assert node.detail == "writes RAW.PUBLIC.ORDERS (+1)"


def test_picture_labels_are_cut_in_the_middle_not_from_the_front() -> None:
    """`…LYTICS.MARTS.DAILY_ACTIVE` lost the database; both ends now stay."""
    mart = Reached(
        "snowflake://acme-demo/ANALYTICS.MARTS.DAILY_ACTIVE",
        "DAILY_ACTIVE",
        "snowflake",
        "Table",
        1,
        (),
        (TABLE.urn,),
    )
    writer = Reader(
        "snowflake://acme-demo/query/mart",
        "mart",
        "snowflake",
        None,
        1,
        10,
        (TABLE.urn,),
        (mart.urn,),
    )
    result = impact_view(Impact(START, [TABLE, mart], {}, [writer]))
    detail = result.by_urn[writer.urn].detail
    assert detail == "writes ANALYTICS.MA….DAILY_ACTIVE", detail
    long = "s3://a-very-long-bucket-name/raw/events/partners/feeds/2024-05"
    assert short(long, 34).startswith("s3://a-very-long")
    assert short(long, 34).endswith("feeds/2024-05") and len(short(long, 34)) == 34


def test_labels() -> None:
    assert label("snowflake://acme/DB.S.ORDERS", "Table", "ORDERS") == "DB.S.ORDERS"
    assert label("s3://b/raw/orders", "Dataset", "orders") == "b/raw/orders"
    assert label("file:///tmp/x", "Dataset", "x") == "/tmp/x"
    assert label("s3://b/f.csv#id", "Column", "id") == "f.csv.id"
    assert label("snowflake://acme/query/abc", "Transformation", "daily") == "daily"


def test_trim_keeps_the_nearest_and_says_so() -> None:
    many = [
        Reached(f"s3://b/{i}", str(i), "s3", "Dataset", 1 + i // 10, (), (START.urn,))
        for i in range(30)
    ]
    trimmed = trim(traversal_view(START, many, "downstream"), limit=11)
    assert len(trimmed.nodes) == 11 and trimmed.hidden == 20
    assert {n.level for n in trimmed.nodes} == {0, 1}
    assert "20 more left out" in trimmed.note
    lots = [
        Reached(f"s3://b/{i}", str(i), "s3", "Dataset", 1, (), (START.urn,))
        for i in range(MAX_PICTURE_NODES + 50)
    ]
    mermaid = to_mermaid(traversal_view(START, lots, "downstream"))
    assert "51 more left out" in mermaid.splitlines()[1]
    assert mermaid.count("-->") == MAX_PICTURE_NODES - 1


# --- text -----------------------------------------------------------------------------------


def test_tree_marks_nodes_reached_twice() -> None:
    a, b, c = (f"s3://b/{n}" for n in "abc")
    found = [
        Reached(a, "a", "s3", "Dataset", 1, (), (START.urn,)),
        Reached(b, "b", "s3", "Dataset", 1, (), (START.urn,)),
        Reached(c, "c", "s3", "Dataset", 2, ("job",), (a, b)),
    ]
    assert tree(traversal_view(START, found, "downstream")).splitlines() == [
        f"{START.urn}  [s3 Dataset]",
        f"├── {a}  [s3 Dataset]",
        f"│   └── {c}  [s3 Dataset]  written by job",
        f"└── {b}  [s3 Dataset]",
        f"    └── {c} (see above)",
    ]


def test_reached_table_and_json() -> None:
    table = reached_table(DOWNSTREAM, "downstream").splitlines()
    # Downstream, the job that wrote an asset comes before it, as data flows.
    assert table[0].split() == ["distance", "system", "kind", "written_by", "urn"]
    assert table[2].split() == ["1", "s3", "Dataset", "spark://job", STAGED.urn]
    assert "Table (deleted)" in table[4]
    up = reached_table([STAGED], "upstream").splitlines()
    # Upstream, the job on an asset's row reads it (toward the start): named so, after it.
    assert up[0].split() == ["distance", "system", "kind", "urn", "read_by"]
    assert up[2].split() == ["1", "s3", "Dataset", STAGED.urn, "spark://job"]
    data = json.loads(to_json({"assets": DOWNSTREAM, "groups": {("s3", "Dataset"): []}}))
    assert data["assets"][0]["via"] == ["spark://job"]
    assert data["groups"] == {"s3/Dataset": []}


# --- pictures -------------------------------------------------------------------------------


def test_mermaid_uses_generated_ids_and_escapes_labels() -> None:
    text = to_mermaid(view())
    assert text.startswith("flowchart LR\n")
    assert '  n0["raw/orders<br/><small>s3 · Dataset</small>"]' in text
    assert "  n0 --> n1" in text and "  n1 --> n2" in text
    nasty = next(line for line in text.splitlines() if line.startswith("  n3["))
    assert "<b>" not in nasty and '\\"' not in nasty and "#x;" not in nasty
    assert "&lt;b&gt;a&amp;" in nasty and "&num;x;" in nasty
    assert "class n3 deleted" in text and "style n0 stroke-width:4px" in text


def test_mermaid_labels_keep_line_breaks_and_control_characters_inside() -> None:
    key = "s3://b/a\r\nb\x01\u2028c"
    down = traversal_view(
        START, [Reached(key, "x", "s3", "File", 1, (), (START.urn,))], "downstream"
    )
    lines = to_mermaid(down).split("\n")
    assert '  n1["b/a#13;#10;b#1;#8232;c<br/><small>s3 · File</small>"]' in lines


def test_svg_writes_control_characters_out_so_it_stays_xml() -> None:
    """XML 1.0 cannot carry most control characters (not even as &#1;): the explorer parses
    the SVG as XML, so each is drawn as its escape and the picture still parses."""
    key = "s3://b/a\tb\x01<i>\u2028c"
    down = traversal_view(
        START, [Reached(key, "x", "s3", "File", 1, ("j\x1f",), (START.urn,))], "downstream"
    )
    root = ET.fromstring(to_svg(down))
    svg = "{http://www.w3.org/2000/svg}"
    texts = [t.text for t in root.iter(f"{svg}text")]
    assert "b/a\\tb\\x01<i>\\u2028c" in texts  # escapes, visible, and the markup as text
    assert next(t.text for t in root.iter(f"{svg}title")) == "j\\x1f"  # the edge's job
    assert not list(root.iter(f"{svg}i"))
    boxes = [(g.get("data-node"), g.get("data-urn")) for g in root.iter(f"{svg}g")]
    assert boxes == [("0", START.urn), ("1", "s3://b/a\\tb\\x01<i>\\u2028c")]  # by place


def test_dot_escapes_and_ranks() -> None:
    text = to_dot(view())
    assert text.startswith("digraph lineage {") and text.rstrip().endswith("}")
    assert '"<b>a&\\\\\\"#x;</b>' in text  # the backslash and quote escaped for DOT
    assert "{ rank=same; n1; }  // level 1" in text
    assert 'style="rounded,filled,dashed"' in text  # the deleted table


@pytest.mark.skipif(
    shutil.which("dot") is None, reason="Graphviz `dot` is not installed (Debian package: graphviz)"
)
def test_graphviz_draws_the_dot_output(tmp_path: Path) -> None:
    out = subprocess.run(
        ["dot", "-Tsvg"],
        input=to_dot(view()),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", out)
    assert "RAW.PUBLIC.ORDERS" in texts and "&lt;b&gt;a&amp;\\&quot;#x;&lt;/b&gt;" in out
    assert out.count('class="edge"') == 3


def test_html_is_self_contained_and_escaped() -> None:
    page = to_html(view())
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # no network
    assert "<script" not in page
    assert "<b>a&" not in page  # the nasty name appears only escaped
    assert "&lt;b&gt;a&amp;" in page
    assert page.count('class="node"') == 4 and page.count('class="edge"') == 3


def test_layout_gives_every_node_its_own_place() -> None:
    many = [
        Reached(f"s3://b/{i}", str(i), "s3", "Dataset", 1 + i % 3, (), (START.urn,))
        for i in range(12)
    ]
    pos = layout(traversal_view(START, many, "downstream"))
    assert len(set(pos.values())) == 13
    assert len({x for x, _ in pos.values()}) == 4  # one column per level


# --- in a real browser ----------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (Debian package: chromium); CI installs it",
)

# Injected into a copy of the page: measures what the browser drew and writes it into the DOM.
MEASURE = """<script>
const rects = [...document.querySelectorAll('g.node')].map(g => {
  const box = g.querySelector('rect').getBBox();
  const texts = [...g.querySelectorAll('text')].map(t => t.getBBox());
  return {urn: g.dataset.urn, label: g.querySelector('text').textContent,
          fits: texts.every(t => t.x >= box.x && t.x + t.width <= box.x + box.width + 0.5),
          x: box.x, y: box.y, w: box.width, h: box.height};
});
const pre = document.createElement('pre');
pre.id = 'measured';
pre.textContent = JSON.stringify(rects);
document.body.appendChild(pre);
</script>"""


def chromium(*args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={profile}", *args],
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip


def browser_view() -> View:
    long_name = Reached(
        "snowflake://acme/ANALYTICS.STAGING.ORDERS_ENRICHED_WITH_CUSTOMERS",
        "ORDERS_ENRICHED_WITH_CUSTOMERS",
        "snowflake",
        "Table",
        3,
        (),
        (TABLE.urn,),
    )
    return traversal_view(START, [*DOWNSTREAM, long_name], "downstream")


def wide_upstream() -> View:
    """Eight levels of S3 datasets upstream of one Snowflake table: 2,600 px wide."""
    start = Reached("snowflake://acme/BI.PUBLIC.DAU", "DAU", "snowflake", "Table", 0)
    found, nearer = [], [start.urn]
    for level in range(1, 9):
        urns = [f"s3://lake/l{level}/d{i}" for i in range(3)]
        found += [
            Reached(u, u, "s3", "Dataset", level, ("spark://job",), tuple(nearer)) for u in urns
        ]
        nearer = urns
    return traversal_view(start, found, "upstream")


@needs_chromium
@pytest.mark.parametrize("picture", [browser_view, wide_upstream])
def test_chromium_draws_every_label_inside_its_box(tmp_path: Path, picture) -> None:  # type: ignore[no-untyped-def]
    page = tmp_path / "lineage.html"
    page.write_text(to_html(picture()).replace("</body>", MEASURE + "</body>"))
    dom = chromium("--dump-dom", page.as_uri()).stdout
    measured = json.loads(
        re.search(r'<pre id="measured">(.*?)</pre>', dom, re.S)
        .group(1)  # type: ignore[union-attr]
        .replace("&quot;", '"')
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
    )
    labels = {m["label"] for m in measured}
    if picture is browser_view:
        assert {"raw/orders", "lake/staging/orders", "RAW.PUBLIC.ORDERS"} <= labels
        assert any(label.endswith('</b>"') for label in labels)  # shown as text, not markup
    assert all(m["fits"] for m in measured), [m for m in measured if not m["fits"]]
    boxes = [(m["x"], m["y"], m["x"] + m["w"], m["y"] + m["h"]) for m in measured]
    overlaps = [
        (a, b)
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]
    ]
    assert overlaps == []


@needs_chromium
def test_chromium_screenshot_shows_the_coloured_nodes(tmp_path: Path) -> None:
    page = tmp_path / "lineage.html"
    page.write_text(to_html(browser_view()))
    shot = tmp_path / "lineage.png"
    chromium(f"--screenshot={shot}", "--window-size=1300,450", page.as_uri())
    width, height, pixels = read_png(shot.read_bytes())
    assert (width, height) == (1300, 450)
    colours = Counter(pixels)
    # Node fills: s3 orange and Snowflake blue, each covering whole boxes (230 x 46 px).
    assert colours[(0xF5, 0x9E, 0x0B)] > 2 * 200 * 40
    assert colours[(0x29, 0xB5, 0xE8)] > 2 * 200 * 40
    assert len(colours) > 50  # text and anti-aliasing, not a blank page


@needs_chromium
def test_chromium_opens_a_wide_upstream_picture_on_its_start(tmp_path: Path) -> None:
    """The start of an upstream answer is drawn at the right end: a 1,400 px window shows it
    rather than the far end of the lineage (the canvas scrolls right to left)."""
    page = tmp_path / "lineage.html"
    page.write_text(to_html(wide_upstream()))
    shot = tmp_path / "lineage.png"
    chromium(f"--screenshot={shot}", "--window-size=1400,900", page.as_uri())
    colours = Counter(read_png(shot.read_bytes())[2])
    assert colours[(0x29, 0xB5, 0xE8)] > 200 * 40  # the start's Snowflake-blue box, in view
    assert colours[(0xF5, 0x9E, 0x0B)] > 3 * 200 * 40  # and the S3 datasets nearest it


def read_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """RGB pixels of an 8-bit, non-interlaced RGB or RGBA PNG (what Chromium writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, header = 8, b"", b""
    while pos < len(data):
        (length,), kind = struct.unpack(">I", data[pos : pos + 4]), data[pos + 4 : pos + 8]
        body = data[pos + 8 : pos + 8 + length]
        header = body if kind == b"IHDR" else header
        idat += body if kind == b"IDAT" else b""
        pos += 12 + length
    width, height, depth, colour_type, _, _, interlace = struct.unpack(">IIBBBBB", header)
    assert depth == 8 and colour_type in (2, 6) and interlace == 0, header
    bpp = 3 if colour_type == 2 else 4
    raw, stride = zlib.decompress(idat), width * bpp
    prev = bytearray(stride)
    pixels: list[tuple[int, int, int]] = []
    for y in range(height):
        row = raw[y * (stride + 1) : (y + 1) * (stride + 1)]
        kind, line = row[0], bytearray(row[1:])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - corner
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - corner)
                pred = left if pa <= pb and pa <= pc else up if pb <= pc else corner
                line[i] = (line[i] + pred) & 0xFF
        pixels.extend(zip(line[0::bpp], line[1::bpp], line[2::bpp], strict=True))
        prev = line
    return width, height, pixels
