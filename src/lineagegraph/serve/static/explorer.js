// The lineagegraph explorer: plain JavaScript, no library, nothing fetched from elsewhere.
// Pictures are SVG drawn by the server (/api/v1/explore/*); this script asks for them, shows
// them and reacts to clicks. A token typed in is kept in sessionStorage (this tab only) and sent
// as an `Authorization: Bearer` header.
"use strict";

const TOKEN_KEY = "lineagegraph-token";
const $ = (id) => document.getElementById(id);
// What the lineage picture shows: its start, the nodes clicked to grow it, and (in the column
// view) the column clicked, by urn.
const state = { mode: "lineage", name: null, expanded: [], selected: null, column: null };

function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

async function getJSON(path, params) {
  const url = new URL(path, window.location.origin);
  for (const [key, value] of params) url.searchParams.append(key, value);
  const headers = { Accept: "application/json" };
  if (token()) headers.Authorization = "Bearer " + token();
  const response = await fetch(url, { headers });
  const body = await response.json().catch(() => ({ reason: response.statusText }));
  if (!response.ok) {
    const error = new Error(body.reason || response.statusText);
    error.status = response.status;
    error.suggestions = body.suggestions || [];
    throw error;
  }
  return body;
}

function say(text, isError = false) {
  $("message").textContent = text;
  $("message").classList.toggle("error", isError);
}

function sayError(error) {
  let text = error.message;
  if (error.status === 401) text += "\nEnter the server's token above and press Use.";
  if (error.suggestions && error.suggestions.length) {
    text += "\nDid you mean:\n" + error.suggestions.join("\n");
  }
  say(text, true);
}

function element(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

function when(ms) {
  return typeof ms === "number" && ms >= 0
    ? new Date(ms).toISOString().slice(0, 19).replace("T", " ") + " UTC" : ms ?? "";
}

// --- Suggestions as you type ---------------------------------------------------------------

function attachSuggestions(input, onPick) {
  const list = input.parentElement.querySelector(".suggestions");
  let timer = null;
  let asked = 0;
  let current = -1;  // the suggestion the arrow keys are on
  const hide = () => { list.hidden = true; current = -1; };
  const pick = (urn) => { input.value = urn; hide(); onPick(urn); };
  const mark = () => {
    [...list.children].forEach((li, i) => li.classList.toggle("current", i === current));
  };
  input.addEventListener("input", () => {
    clearTimeout(timer);
    const text = input.value.trim();
    if (text.length < 2) { hide(); return; }
    timer = setTimeout(async () => {
      const ask = ++asked;
      try {
        const urns = await getJSON("/api/v1/explore/suggest", [["q", text]]);
        if (ask !== asked) return;  // an older answer arriving late
        list.replaceChildren(...urns.map((urn) => {
          const item = element("li", urn);
          item.addEventListener("mousedown", (event) => { event.preventDefault(); pick(urn); });
          return item;
        }));
        current = -1;
        list.hidden = urns.length === 0;
      } catch (error) {
        sayError(error);
      }
    }, 150);
  });
  input.addEventListener("blur", hide);
  input.addEventListener("keydown", (event) => {
    const count = list.hidden ? 0 : list.children.length;
    if (event.key === "Escape") {
      hide();
    } else if ((event.key === "ArrowDown" || event.key === "ArrowUp") && count) {
      event.preventDefault();
      current = (current + (event.key === "ArrowDown" ? 1 : count - 1) + count) % count;
      mark();
    } else if (event.key === "Enter" && current >= 0 && count) {
      event.preventDefault();  // the highlighted suggestion, not the text typed so far
      pick(list.children[current].textContent);
    } else if (event.key === "Enter") {
      clearTimeout(timer);  // what was typed is looked up: suggestions still coming are moot
      asked++;
      hide();
    }
  });
}

// --- Pictures ------------------------------------------------------------------------------

// --- Pan and zoom: the picture's viewBox is moved; the SVG always fills its box ------------

// SVG's namespace, as the HTML parser gives it (no address written in this script)
const SVG_NS = (() => {
  const holder = document.createElement("div");
  holder.innerHTML = "<svg></svg>";
  return holder.firstChild.namespaceURI;
})();
const MAX_FIT = 1.25;  // a small picture is not blown up beyond this when fitted
const MIN_BOX = 220;  // px: the lowest the picture's box gets
const view = { svg: null, base: null, box: null, dragged: false };

function setBox(box) {
  view.box = box;
  view.svg.setAttribute("viewBox", box.map((n) => n.toFixed(1)).join(" "));
}

// The whole picture in its box: the box as tall as the picture needs at the width it has (at
// most what is left of the window), the picture scaled to fit and centred.
function fitPicture() {
  if (!view.svg) return;
  const canvas = $("canvas");
  const [bx, by, bw, bh] = view.base;
  const width = canvas.clientWidth;
  const room = Math.max(MIN_BOX, window.innerHeight - canvas.getBoundingClientRect().top - 12);
  const scale = Math.min(width / bw, room / bh, MAX_FIT);
  const height = Math.max(MIN_BOX, Math.min(room, Math.ceil(bh * scale) + 16));
  canvas.style.height = height + "px";  // CSSOM: allowed by the page's CSP
  const w = canvas.clientWidth / scale;
  const h = canvas.clientHeight / scale;
  setBox([bx + (bw - w) / 2, by + (bh - h) / 2, w, h]);
}

// Zoom by `factor` (below 1: in) keeping the point at (px, py) in the box where it is.
function zoom(factor, px = 0.5, py = 0.5) {
  if (!view.box) return;
  const [x, y, w, h] = view.box;
  const cx = x + px * w;
  const cy = y + py * h;
  setBox([cx - (cx - x) * factor, cy - (cy - y) * factor, w * factor, h * factor]);
}

function attachPanZoom() {
  const canvas = $("canvas");
  canvas.addEventListener("wheel", (event) => {
    if (!view.svg) return;
    event.preventDefault();
    const rect = view.svg.getBoundingClientRect();
    zoom(Math.exp(event.deltaY * 0.0015), (event.clientX - rect.left) / rect.width,
      (event.clientY - rect.top) / rect.height);
  }, { passive: false });
  canvas.addEventListener("pointerdown", (event) => {
    if (!view.svg || event.button !== 0) return;
    const start = [event.clientX, event.clientY];
    const from = view.box;
    const perPixel = from[2] / view.svg.getBoundingClientRect().width;
    view.dragged = false;
    const move = (e) => {
      const dx = e.clientX - start[0];
      const dy = e.clientY - start[1];
      if (!view.dragged && Math.hypot(dx, dy) < 4) return;  // a click, not a drag
      view.dragged = true;
      canvas.classList.add("panning");
      setBox([from[0] - dx * perPixel, from[1] - dy * perPixel, from[2], from[3]]);
    };
    const up = () => {
      window.removeEventListener("pointermove", move);
      window.removeEventListener("pointerup", up);
      canvas.classList.remove("panning");
    };
    window.addEventListener("pointermove", move);
    window.addEventListener("pointerup", up);
  });
  // a drag ends without clicking what it started on
  canvas.addEventListener("click", (event) => {
    if (view.dragged) { event.stopPropagation(); view.dragged = false; }
  }, true);
  $("zoom-in").addEventListener("click", () => zoom(1 / 1.25));
  $("zoom-out").addEventListener("click", () => zoom(1.25));
  $("zoom-fit").addEventListener("click", fitPicture);
  window.addEventListener("resize", fitPicture);
}

// Each edge's transformations written on it (a short name; every urn on hover), from the
// `<title>` the server gives the edge.
function labelEdges(svg) {
  const firstNode = svg.querySelector("g.node");
  for (const path of svg.querySelectorAll("path.edge")) {
    const title = path.querySelector("title");
    if (!title || !path.getTotalLength) continue;
    const urns = title.textContent.split(", ");
    const short = urns.map((u) => u.replace(/\/+$/, "").split("/").pop() || u);
    let text = short.join(", ");
    if (text.length > 28) text = text.slice(0, 27) + "…";
    const middle = path.getPointAtLength(path.getTotalLength() / 2);
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("class", "edge-label");
    label.setAttribute("x", middle.x.toFixed(1));
    label.setAttribute("y", (middle.y - 5).toFixed(1));
    label.setAttribute("text-anchor", "middle");
    label.textContent = text;
    const tip = document.createElementNS(SVG_NS, "title");
    tip.textContent = urns.join("\n");
    label.append(tip);
    svg.insertBefore(label, firstNode);
  }
}

function draw(picture, onNode) {
  const parsed = new DOMParser().parseFromString(picture.svg, "image/svg+xml");
  const svg = document.importNode(parsed.documentElement, true);
  const base = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  view.base = base.length === 4 && base.every(Number.isFinite) ? base
    : [0, 0, Number(svg.getAttribute("width")) || 800, Number(svg.getAttribute("height")) || 400];
  svg.setAttribute("width", "100%");
  svg.setAttribute("height", "100%");
  svg.setAttribute("preserveAspectRatio", "xMidYMid meet");
  view.svg = svg;
  $("canvas").replaceChildren(svg);
  $("zoom").hidden = false;
  fitPicture();
  labelEdges(svg);
  $("picked").textContent = "";  // a column view's clicked column, said again if still lit
  for (const g of svg.querySelectorAll("g.node")) {
    // a node's place in `nodes` names it exactly: its urn may hold characters XML cannot
    if (g.dataset.node !== undefined) g.dataset.urn = picture.nodes[Number(g.dataset.node)].urn;
    const urn = g.dataset.urn;
    g.classList.toggle("expanded", state.expanded.includes(urn));
    g.classList.toggle("selected", urn === state.selected);
    g.addEventListener("click", () => onNode(urn, picture.nodes.find((n) => n.urn === urn)));
  }
  $("legend").replaceChildren(...picture.legend.map((entry) => {
    const item = element("span", entry.label);
    const swatch = element("i");
    if (entry.class) {  // a change: an outline in its colour, as the picture draws it
      item.classList.add("change", entry.class);
      swatch.style.borderColor = entry.colour;  // CSSOM: allowed by the page's CSP
    } else {
      swatch.style.background = entry.colour;
    }
    item.prepend(swatch);
    return item;
  }));
  const changed = picture.legend.some((entry) => entry.class) && picture.changes
    ? ` · ${picture.changes.added} added, ${picture.changes.removed} removed` : "";
  const columns = picture.column_changes  // the column view's own changes, counted apart
    ? `; columns and their edges ${picture.column_changes.added} added, `
      + `${picture.column_changes.removed} removed` : "";
  const counts = `${picture.nodes.length} node(s), ${picture.edges} edge(s)${changed}${columns}`;
  $("summary").textContent = `${picture.title} · ${counts}`;
  say(picture.note || "");
}

async function showLineage() {
  if (!state.name) return;
  say("Loading…");
  const params = [
    ["name", state.name],
    ["direction", $("direction").value],
    ["depth", $("depth").value],
    ["include_deleted", $("deleted").checked ? "true" : "false"],
    ["colour", $("colour").value],
    ...timeParam("as_of", "as-of"),
    ...timeParam("since", "since"),
    ...state.expanded.map((urn) => ["expand", urn]),
  ];
  const columns = $("columns").checked;
  try {
    const picture = await getJSON("/api/v1/explore/" + (columns ? "columns" : "graph"), params);
    draw(picture, lineageNodeClicked);
    if (columns) wireColumns(picture);
  } catch (error) {
    sayError(error);
  }
}

// --- The time control: the picture as of a time, and what changed since an earlier one ------

const DAY_MS = 24 * 60 * 60 * 1000;

// A datetime-local input's value (the browser's local time) for epoch ms
function localTime(ms) {
  const local = new Date(ms - new Date(ms).getTimezoneOffset() * 60000);
  return local.toISOString().slice(0, 19);
}

// The query parameter `name` for the input `id`: epoch ms (the server reads no time zone from
// a local time), or the text as typed so the server says what is wrong with it
function timeParam(name, id) {
  const value = $(id).value.trim();
  if (!value) return [];
  const ms = new Date(value).getTime();
  return [[name, Number.isFinite(ms) ? String(ms) : value]];
}

// A preset: `as of` that many days before now, `changes since` that many days before `as of`
function usePreset(id) {
  const days = Number($(id + "-preset").value);
  const asOf = $("as-of").value ? new Date($("as-of").value).getTime() : Date.now();
  $(id).value = days ? localTime((id === "since" ? asOf : Date.now()) - days * DAY_MS) : "";
  showLineage();
}

function lineageNodeClicked(urn, node) {
  state.selected = urn;
  if (node && node.kind !== "Transformation" && !node.start && !state.expanded.includes(urn)) {
    state.expanded.push(urn);
    showLineage();
  } else {
    for (const g of $("canvas").querySelectorAll("g.node")) {
      g.classList.toggle("selected", g.dataset.urn === urn);
    }
  }
  if (node && node.kind !== "Transformation") showAsset(urn);
}

function startAt(name) {
  state.name = name;
  state.expanded = [];
  state.selected = null;
  state.column = null;
  showLineage();
  showAsset(name);
}

// --- The column view ----------------------------------------------------------------------

// Columns are named in the SVG by their place in `picture.columns`; a click highlights the
// columns feeding the one clicked and those it feeds, from `picture.column_edges`.
function wireColumns(picture) {
  const index = new Map(picture.columns.map((c, i) => [c.urn, i]));
  const feeds = picture.column_edges.map((e) => [index.get(e.from), index.get(e.to)]);
  for (const g of $("canvas").querySelectorAll("g.column")) {
    g.addEventListener("click", () => pickColumn(picture, feeds, Number(g.dataset.column)));
  }
  const again = index.get(state.column);  // still on the picture after a redraw
  if (again === undefined) state.column = null; else pickColumn(picture, feeds, again);
}

function reach(feeds, start, forward) {
  const next = new Map();
  for (const [a, b] of feeds) {
    const [from, to] = forward ? [a, b] : [b, a];
    if (!next.has(from)) next.set(from, []);
    next.get(from).push(to);
  }
  const seen = new Set();
  const todo = [start];
  while (todo.length) {
    for (const n of next.get(todo.pop()) || []) {
      if (n !== start && !seen.has(n)) { seen.add(n); todo.push(n); }
    }
  }
  return seen;
}

function pickColumn(picture, feeds, picked) {
  const up = reach(feeds, picked, false);
  const down = reach(feeds, picked, true);
  const canvas = $("canvas");
  state.column = picture.columns[picked].urn;
  canvas.querySelector("svg").classList.add("picking");
  for (const g of canvas.querySelectorAll("g.column")) {
    const k = Number(g.dataset.column);
    g.classList.toggle("picked", k === picked);
    g.classList.toggle("upstream", up.has(k));
    g.classList.toggle("downstream", down.has(k));
  }
  for (const path of canvas.querySelectorAll("path.feed")) {
    const a = Number(path.dataset.from);
    const b = Number(path.dataset.to);
    const lit = (up.has(a) && (b === picked || up.has(b)))
      || (down.has(b) && (a === picked || down.has(a)));
    path.classList.toggle("lit", lit);
  }
  const column = picture.columns[picked];
  const dropped = column.dropped_at == null ? ""
    : ` (dropped ${new Date(column.dropped_at).toISOString().replace(".000Z", "Z")})`;
  $("picked").textContent = `Column ${column.name}${dropped} of ${column.asset}: ${up.size} `
    + `column(s) upstream, ${down.size} downstream on this picture`;
}

async function showPaths() {
  say("Loading…");
  const params = [["from", $("path-from").value.trim()], ["to", $("path-to").value.trim()],
    ["depth", $("path-depth").value], ["colour", $("colour").value]];
  try {
    draw(await getJSON("/api/v1/explore/path", params), (urn, node) => {
      if (node && node.kind !== "Transformation") showAsset(urn);
    });
  } catch (error) {
    sayError(error);
  }
}

// --- The asset page ------------------------------------------------------------------------

function table(headings, rows) {
  const result = element("table");
  const head = element("tr");
  head.append(...headings.map((h) => element("th", h)));
  result.append(head);
  for (const row of rows) {
    const line = element("tr");
    line.append(...row.map((cell) => (cell instanceof Node ? wrap(cell) : element("td", cell))));
    result.append(line);
  }
  return result;
}

function wrap(node) {
  const cell = element("td");
  cell.append(node);
  return cell;
}

function badge(text, className) {
  return element("span", text, "badge " + (className || ""));
}

function propertyValue(key, value) {
  if (/(_at|_seen|_time|modified)$/.test(key) && typeof value === "number") return when(value);
  return typeof value === "object" ? JSON.stringify(value) : value;
}

// An asset's tags and its columns', own and derived, each with its why: where it came from
// (source, who, the reason), the origin, the path and its hops; then where a tag stopped.
function classifications(tags) {
  const rows = [];
  const add = (on, own, derived) => {
    const label = on === tags.target.urn ? "asset" : on.split("#").pop();
    for (const o of own) {
      rows.push([label, badge(o.key + (o.value === null ? "" : "=" + o.value), "tag"), "own",
        [o.source, o.by, o.reason].filter(Boolean).join(" · "), "", ""]);
    }
    for (const d of derived) {
      rows.push([label, badge(d.key + (d.value === null ? "" : "=" + d.value), "tag"),
        "derived", [d.origin.source, d.origin.by, d.origin.reason].filter(Boolean).join(" · "),
        `${d.hops} hop(s) from ${d.origin.target}`, d.path.join(" → ")]);
    }
  };
  add(tags.target.urn, tags.own, tags.derived);
  for (const [urn, c] of Object.entries(tags.columns)) add(urn, c.own, c.derived);
  const parts = [element("h3", `Classifications (${rows.length})`)];
  parts.push(table(["on", "tag", "", "stated by", "origin", "path"], rows));
  if (tags.stops.length) {
    parts.push(element("h3", `Stopped on the way (${tags.stops.length})`));
    parts.push(table(["tag", "from", "to", "why"], tags.stops.map((s) => [
      s.key + (s.value === null ? "" : "=" + s.value), s.src, s.dst, s.reason])));
  }
  return parts;
}

async function showAsset(name) {
  const panel = $("asset");
  try {
    const page = await getJSON("/api/v1/explore/asset", [["name", name]]);
    const a = page.asset;
    const parts = [element("h2", a.name), element("div", a.urn, "urn")];
    const facts = element("p");
    facts.append(badge(a.system || "?"), " ", badge(a.kind), " ",
      badge("quality: " + (a.quality || "unknown"), "q-" + (a.quality || "unknown")));
    if (a.deleted_at !== null) facts.append(" ", badge("deleted " + when(a.deleted_at), "deleted"));
    parts.push(facts);
    const open = element("button", "Show its lineage");
    open.type = "button";
    open.addEventListener("click", () => {
      setMode("lineage");
      $("search").value = a.urn;
      startAt(a.urn);
    });
    parts.push(open);
    parts.push(element("h3", "Properties"));
    parts.push(table(["property", "value"],
      Object.entries(page.properties).map(([k, v]) => [k, propertyValue(k, v)])));
    parts.push(element("h3", `Transformations and runs (${page.transformations.length})`));
    parts.push(table(["transformation", "", "runs", "last run"], page.transformations.map((t) => [
      t.name || t.urn, t.rel === "WRITES_TO" ? "writes" : "reads", t.runs ?? "",
      when(t.last_run_at)])));
    parts.push(element("h3", `Quality checks (${page.checks.length})`));
    parts.push(table(["check", "on", "status", "failures", "at"], page.checks.map(
      (c) => [c.name || c.urn, c.target === a.urn ? "asset" : c.target.split("/").pop(),
        badge(c.status, "q-" + c.status), c.failures ?? "", when(c.at)])));
    parts.push(...classifications(page.tags));
    panel.replaceChildren(...parts);
    panel.hidden = false;
  } catch (error) {
    sayError(error);
  }
}

// --- The orphan cost report --------------------------------------------------------------

// `lineagegraph orphans --format json`, as this server's explorer route answers it (the
// /api/v1/orphans route answers the same document).
const ORPHANS_URL = "/api/v1/orphans";
const report = { columns: [], rows: [], totals: {}, sortBy: "monthly_usd", descending: true,
  currency: "USD" };

async function showOrphans() {
  say("Loading…");
  const by = $("by").value;
  const params = [["lookback_days", $("lookback").value], ["by", by]];
  // the chart needs rows with a bucket and a storage class: the report by both if the table's
  // rows have not
  const both = [["lookback_days", $("lookback").value], ["by", "dataset-class"]];
  try {
    const [doc, charted] = await Promise.all([getJSON(ORPHANS_URL, params),
      by === "dataset-class" ? null : getJSON(ORPHANS_URL, both)]);
    report.rows = doc.rows;
    report.totals = doc.totals;
    report.columns = tableColumns(doc.rows.length ? Object.keys(doc.rows[0]) : []);
    report.currency = doc.price_table.currency;
    report.sortBy = "monthly_usd";
    report.descending = true;
    $("report-title").textContent = `Orphaned S3 objects as of ${doc.as_of}: nothing consumed `
      + `them in the ${doc.lookback_days} days since ${doc.since} (prices: `
      + `${doc.price_table.region}, ${doc.price_table.currency} a month)`;
    costChart((charted || doc).rows);
    drawReport();
    say([doc.rows.length ? "" : "No orphaned objects.", ...doc.warnings, ...doc.notes]
      .join("\n").trim());
  } catch (error) {
    sayError(error);
  }
}

function isNumber(value) {
  return typeof value === "number" || (typeof value === "string" && /^-?\d+(\.\d+)?$/.test(value));
}

function compare(a, b) {
  if (a === null || a === undefined) return b === null || b === undefined ? 0 : 1;  // nulls last
  if (b === null || b === undefined) return -1;
  if (isNumber(a) && isNumber(b)) return Number(a) - Number(b);
  return String(a).localeCompare(String(b));
}

// Sizes and money for people; the exact value (the report's own) on hover and in the JSON.
const UNITS = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

function size(bytes) {
  let value = Number(bytes);
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) { value /= 1024; unit++; }
  if (unit === 0) return `${value.toLocaleString("en-US")} bytes`;
  const digits = Math.abs(value) >= 100 ? 0 : Math.abs(value) >= 10 ? 1 : 2;
  return `${value.toFixed(digits)} ${UNITS[unit]}`;
}

function money(amount) {
  const value = Number(amount);
  const places = value === 0 || Math.abs(value) >= 1 ? 2
    : Math.min(9, Math.max(2, 1 - Math.floor(Math.log10(Math.abs(value)))));
  const text = Math.abs(value).toLocaleString("en-US",
    { minimumFractionDigits: places, maximumFractionDigits: places });
  return (value < 0 ? "-$" : "$") + text;
}

// How a report column shows: [the text, the exact value on hover, right-aligned?].
function shown(value, column) {
  if (value === null || value === undefined) return ["", "", false];
  if (/bytes$/.test(column)) return [size(value), `${Number(value).toLocaleString("en-US")} bytes`, true];
  if (/_usd$/.test(column)) return [money(value), `${value} ${report.currency} a month`, true];
  if (/(_modified|_read)$/.test(column) && typeof value === "string") {
    return [value.slice(0, 10), value, false];
  }
  if (isNumber(value) && !/(bucket|dataset|class)$/.test(column)) {
    return [Number(value).toLocaleString("en-US"), String(value), true];
  }
  return [String(value), "", false];
}

function cell(value, column) {
  const [text, exact, numeric] = shown(value, column);
  const td = element("td", text, numeric ? "num" : "");
  if (exact && exact !== text) td.title = exact;
  return td;
}

// The columns the table shows: a size in GiB is the size in bytes again (its exact figure is
// in the JSON and on hover), so only the bytes column is shown.
function tableColumns(columns) {
  return columns.filter((c) => !(/gib$/.test(c) && columns.includes(c.replace(/gib$/, "bytes"))));
}

// --- The cost chart: monthly cost by storage class and by bucket, summed from the rows -----

function costChart(rows) {
  const charts = [];
  for (const [column, heading] of [["storage_class", "by storage class"], ["bucket", "by bucket"]]) {
    if (!rows.length || !(column in rows[0])) continue;
    const sums = new Map();
    for (const row of rows) {
      const key = row[column] ?? "?";
      sums.set(key, (sums.get(key) || 0) + Number(row.monthly_usd || 0));
    }
    const bars = [...sums].sort((a, b) => b[1] - a[1]).slice(0, 12);
    charts.push(barChart(`Monthly cost ${heading}`, bars));
  }
  $("report-chart").replaceChildren(...charts);
  $("report-chart").hidden = charts.length === 0;
}

function barChart(heading, bars) {
  const figure = element("figure", null, "chart");
  figure.append(element("figcaption", heading));
  const rowHeight = 22;
  const labelWidth = 150;
  const barWidth = 260;
  const svg = document.createElementNS(SVG_NS, "svg");
  const height = bars.length * rowHeight + 4;
  svg.setAttribute("viewBox", `0 0 ${labelWidth + barWidth + 90} ${height}`);
  svg.setAttribute("width", String(labelWidth + barWidth + 90));
  svg.setAttribute("height", String(height));
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", heading);
  const most = Math.max(...bars.map(([, v]) => v), 1e-12);
  bars.forEach(([name, value], i) => {
    const g = document.createElementNS(SVG_NS, "g");
    g.setAttribute("class", "bar");
    g.setAttribute("transform", `translate(0 ${i * rowHeight + 2})`);
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("x", String(labelWidth - 6));
    label.setAttribute("y", "14");
    label.setAttribute("text-anchor", "end");
    label.textContent = String(name).length > 22 ? String(name).slice(0, 21) + "…" : String(name);
    const rect = document.createElementNS(SVG_NS, "rect");
    rect.setAttribute("x", String(labelWidth));
    rect.setAttribute("y", "3");
    rect.setAttribute("height", String(rowHeight - 6));
    rect.setAttribute("width", Math.max(1, (value / most) * barWidth).toFixed(1));
    const amount = document.createElementNS(SVG_NS, "text");
    amount.setAttribute("class", "amount");
    amount.setAttribute("x", (labelWidth + Math.max(1, (value / most) * barWidth) + 6).toFixed(1));
    amount.setAttribute("y", "14");
    amount.textContent = money(value);
    const tip = document.createElementNS(SVG_NS, "title");
    tip.textContent = `${name}: ${value.toFixed(9)} ${report.currency} a month`;
    g.append(tip, label, rect, amount);
    svg.append(g);
  });
  figure.append(svg);
  return figure;
}

function drawReport() {
  const { columns, sortBy, descending } = report;
  const sign = descending ? -1 : 1;
  const rows = [...report.rows].sort((a, b) => {
    const order = compare(a[sortBy], b[sortBy]);
    // nulls stay last whichever way the column is sorted
    return a[sortBy] === null || b[sortBy] === null ? order : sign * order;
  });
  const head = element("tr");
  for (const column of columns) {
    const th = element("th", column);
    if (column === sortBy) th.setAttribute("aria-sort", descending ? "descending" : "ascending");
    th.addEventListener("click", () => {
      report.descending = column === report.sortBy ? !report.descending : isNumber(rows[0]?.[column]);
      report.sortBy = column;
      drawReport();
    });
    head.append(th);
  }
  const table = $("report-table");
  table.tHead.replaceChildren(head);
  table.tBodies[0].replaceChildren(...rows.map((row) => {
    const line = element("tr");
    line.append(...columns.map((column) => cell(row[column], column)));
    return line;
  }));
  const total = element("tr");
  total.append(...columns.map((column, i) => (
    i === 0 ? element("td", "Total") : cell(report.totals[column], column))));
  table.tFoot.replaceChildren(...(columns.length ? [total] : []));
}

// --- Wiring --------------------------------------------------------------------------------

function setMode(mode) {
  state.mode = mode;
  for (const name of ["lineage", "path", "orphans"]) {
    $(name + "-form").hidden = mode !== name;
    $("tab-" + name).classList.toggle("active", mode === name);
  }
  $("explore").hidden = mode === "orphans";
  $("report").hidden = mode !== "orphans";
}

function main() {
  $("token").value = token();
  $("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const value = $("token").value.trim();
    if (value) sessionStorage.setItem(TOKEN_KEY, value); else sessionStorage.removeItem(TOKEN_KEY);
    say(value ? "Token kept for this tab." : "Token cleared.");
  });
  $("tab-lineage").addEventListener("click", () => setMode("lineage"));
  $("tab-path").addEventListener("click", () => setMode("path"));
  $("tab-orphans").addEventListener("click", () => setMode("orphans"));
  $("orphans-form").addEventListener("submit", (event) => { event.preventDefault(); showOrphans(); });
  attachSuggestions($("search"), startAt);
  attachSuggestions($("path-from"), () => $("path-to").focus());
  attachSuggestions($("path-to"), () => {});
  $("lineage-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const name = $("search").value.trim();
    if (name) startAt(name);
  });
  for (const id of ["direction", "depth", "deleted", "colour", "columns", "as-of", "since"]) {
    $(id).addEventListener("change", showLineage);
  }
  for (const id of ["as-of", "since"]) {
    $(id + "-preset").addEventListener("change", () => usePreset(id));
  }
  $("path-form").addEventListener("submit", (event) => { event.preventDefault(); showPaths(); });
  attachPanZoom();
}

main();
