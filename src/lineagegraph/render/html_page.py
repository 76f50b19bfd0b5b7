"""A self-contained HTML page of a view: title, legend, the SVG and a table of its nodes."""

from __future__ import annotations

import html

from lineagegraph.render.style import QUALITY_COLOURS, TAGGED, colour, shows_quality
from lineagegraph.render.svg import layout, to_svg
from lineagegraph.render.views import View, trim

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 16px;
       color: #111; background: #fafafa; }}
h1 {{ font-size: 18px; margin: 0 0 4px; }}
.note {{ color: #a15c00; margin: 4px 0; }}
.legend span {{ display: inline-block; margin-right: 14px; font-size: 13px; }}
.legend i {{ display: inline-block; width: 12px; height: 12px; border: 1px solid #333;
            border-radius: 3px; margin-right: 4px; vertical-align: -1px; }}
.canvas {{ overflow: auto; border: 1px solid #ddd; background: #fff; margin: 10px 0; }}
.canvas svg {{ direction: ltr; }}
svg text {{ font-family: inherit; }}
table {{ border-collapse: collapse; font-size: 13px; }}
td, th {{ border-bottom: 1px solid #e5e5e5; padding: 3px 10px 3px 0; text-align: left; }}
</style></head>
<body>
<h1>{title}</h1>
<div class="summary">{summary}</div>
{note}
<div class="legend">{legend}<span>── flows to</span><span>- - - reads, or indirect</span>
<span>bold border: the start</span>{tagged}</div>
<div class="canvas" dir="{side}">{svg}</div>
<table><thead><tr><th>level</th><th>system</th><th>kind</th><th>quality</th><th>urn</th>
<th>tags</th></tr>
</thead>
<tbody>{rows}</tbody></table>
</body></html>
"""


def to_html(view: View) -> str:
    """A page that draws the lineage offline: title, legend, the SVG and a table of nodes."""
    e = html.escape
    shown = trim(view)
    if shows_quality(shown):
        legend = "".join(
            f'<span><i style="background:{QUALITY_COLOURS[q]}"></i>{q}</span>'
            for q in QUALITY_COLOURS
        )
    else:
        legend = "".join(
            f'<span><i style="background:{colour(s)}"></i>{e(s or "?")}</span>'
            for s in sorted({n.system or "" for n in shown.nodes})
        )
    rows = "".join(
        f"<tr><td>{n.level}</td><td>{e(n.system or '?')}</td><td>{e(n.kind)}"
        f"{' (deleted)' if n.deleted else ''}</td><td>{e(n.quality or '')}</td>"
        f"<td>{e(n.urn)}{f'<br><small>{e(n.detail)}</small>' if n.detail else ''}</td>"
        f"<td>{e(', '.join(n.tags))}</td></tr>"
        for n in sorted(view.nodes, key=lambda n: (n.level, n.urn))
    )
    summary = f"{len(view.nodes)} node(s), {len(view.edges)} edge(s)"
    tagged = any(n.tags for n in shown.nodes)
    return _PAGE.format(
        title=e(view.title),
        summary=summary,
        note=f'<p class="note">{e(shown.note)}</p>' if shown.note else "",
        legend=legend,
        tagged=f'<span style="color:{TAGGED}">red border: carries a classification</span>'
        if tagged
        else "",
        svg=to_svg(shown),
        side=_scroll_side(shown),
        rows=rows,
    )


def _scroll_side(view: View) -> str:
    """`rtl` when the start is nearer the picture's right end (an upstream answer): a wide
    picture then opens scrolled to its right end, the start in sight, instead of cutting it
    off; `ltr` otherwise (also with no start, as a diff's picture has). Plain CSS (a
    right-to-left scroll box), so the page needs no script."""
    pos = layout(view)
    left = [x for x, _ in pos.values()]
    start = next((pos[n.urn][0] for n in view.nodes if n.start), None)
    if start is None:
        return "ltr"
    return "rtl" if start - min(left) > max(left) - start else "ltr"
