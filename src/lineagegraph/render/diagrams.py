"""Mermaid and Graphviz DOT text of a view, for a wiki or `dot -Tsvg`."""

from __future__ import annotations

import html
from collections import defaultdict

from lineagegraph.render.style import CONTROL, TAGGED, fill, shows_quality, subtitle
from lineagegraph.render.views import Node, View, by_level, trim


def _ids(view: View) -> dict[str, str]:
    """Generated identifiers, so no urn character ever reaches Mermaid or DOT syntax."""
    return {node.urn: f"n{i}" for i, node in enumerate(view.nodes)}


def _mermaid_text(text: str) -> str:
    """Escaped for a quoted label. A line break or other control character would end the
    statement: each becomes Mermaid's own entity code (`#13;`), which '#' (as `&num;`) cannot
    be mistaken for."""
    escaped = html.escape(text, quote=True).replace("#", "&num;")
    return CONTROL.sub(lambda m: f"#{ord(m.group())};", escaped)


def to_mermaid(view: View) -> str:
    """A Mermaid flowchart, left to right in the direction data flows."""
    view = trim(view)
    ids = _ids(view)
    lines = ["flowchart LR"]
    if view.note:
        lines.append(f"%% {view.note}")
    for node in view.nodes:
        label = f"{_mermaid_text(node.name)}<br/><small>{_mermaid_text(subtitle(node))}</small>"
        shape = ('(["', '"])') if node.kind == "Transformation" else ('["', '"]')
        lines.append(f"  {ids[node.urn]}{shape[0]}{label}{shape[1]}")
    for edge in view.edges:
        arrow = "-.->" if edge.dashed else "-->"
        lines.append(f"  {ids[edge.src]} {arrow} {ids[edge.dst]}")
    by_quality = shows_quality(view)
    classes: dict[str, list[Node]] = defaultdict(list)
    for node in view.nodes:
        quality = by_quality and node.kind != "Transformation"
        key = f"q_{node.quality or 'unknown'}" if quality else f"sys_{node.system or ''}"
        classes["".join(c if c.isalnum() else "_" for c in key)].append(node)
    for name, members in sorted(classes.items()):
        lines.append(
            f"  classDef {name} fill:{fill(members[0], by_quality)},color:#111,stroke:#333"
        )
        lines.append(f"  class {','.join(ids[n.urn] for n in members)} {name}")
    starts = ",".join(ids[n.urn] for n in view.nodes if n.start)
    if starts:  # a diff's picture has none; `style  ...` is a Mermaid syntax error
        lines.append(f"  style {starts} stroke-width:4px,stroke:#111")
    deleted = [ids[n.urn] for n in view.nodes if n.deleted]
    if deleted:
        lines.append("  classDef deleted stroke-dasharray:5 5,opacity:0.6")
        lines.append(f"  class {','.join(deleted)} deleted")
    tagged = [ids[n.urn] for n in view.nodes if n.tags and not n.start]
    if tagged:  # the start keeps its bold black border; its subtitle names its tags
        lines.append(f"  classDef tagged stroke:{TAGGED},stroke-width:3px")
        lines.append(f"  class {','.join(tagged)} tagged")
    return "\n".join(lines)


def _dot_text(text: str) -> str:
    """A DOT string; NUL, which ends Graphviz's input, is drawn as its symbol ␀."""
    text = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return '"' + text.replace("\x00", "\u2400") + '"'


def to_dot(view: View) -> str:
    """A Graphviz digraph with one rank per level (`dot -Tsvg lineage.dot > lineage.svg`)."""
    view = trim(view)
    ids = _ids(view)
    by_quality = shows_quality(view)
    lines = [
        f"digraph lineage {{  // {_dot_text(view.title)}",
        "  rankdir=LR;",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=11];',
        '  edge [color="#555555"];',
    ]
    if view.note:
        lines.append(f"  label={_dot_text(view.note)}; labelloc=b;")
    for node in view.nodes:
        attrs = {
            "label": f"{node.name}\n{subtitle(node)}",
            "tooltip": node.urn,
            "fillcolor": fill(node, by_quality),
        }
        if node.kind == "Transformation":
            attrs["shape"] = "ellipse"
        attrs["style"] = "rounded,filled" + (",dashed" if node.deleted else "")
        if node.tags:
            attrs["tooltip"] += "\ntags: " + ", ".join(node.tags)
            if not node.start:
                attrs["color"] = TAGGED
        extra = ", penwidth=3" if node.start or node.tags else ""
        body = ", ".join(f"{k}={_dot_text(v)}" for k, v in attrs.items())
        lines.append(f"  {ids[node.urn]} [{body}{extra}];")
    for level, members in sorted(by_level(view.nodes).items()):
        names = "; ".join(ids[n.urn] for n in members)
        lines.append(f"  {{ rank=same; {names}; }}  // level {level}")
    for edge in view.edges:
        dashed = " [style=dashed]" if edge.dashed else ""
        lines.append(f"  {ids[edge.src]} -> {ids[edge.dst]}{dashed};")
    lines.append("}")
    return "\n".join(lines)
