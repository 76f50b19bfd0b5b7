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

function draw(picture, onNode) {
  const parsed = new DOMParser().parseFromString(picture.svg, "image/svg+xml");
  const svg = document.importNode(parsed.documentElement, true);
  $("canvas").replaceChildren(svg);
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
    swatch.style.background = entry.colour;  // CSSOM: allowed by the page's CSP
    item.prepend(swatch);
    return item;
  }));
  const counts = `${picture.nodes.length} node(s), ${picture.edges} edge(s)`;
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
  $("picked").textContent = `Column ${column.name} of ${column.asset}: ${up.size} column(s) `
    + `upstream, ${down.size} downstream on this picture`;
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
const report = { columns: [], rows: [], totals: {}, sortBy: "monthly_usd", descending: true };

async function showOrphans() {
  say("Loading…");
  const params = [["lookback_days", $("lookback").value], ["by", $("by").value]];
  try {
    const doc = await getJSON(ORPHANS_URL, params);
    report.rows = doc.rows;
    report.totals = doc.totals;
    report.columns = doc.rows.length ? Object.keys(doc.rows[0]) : [];
    report.sortBy = "monthly_usd";
    report.descending = true;
    $("report-title").textContent = `Orphaned S3 objects as of ${doc.as_of}: nothing consumed `
      + `them in the ${doc.lookback_days} days since ${doc.since} (prices: `
      + `${doc.price_table.region}, ${doc.price_table.currency} a month)`;
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

function cell(value, column) {
  const numeric = isNumber(value) && !/(bucket|dataset|class)$/.test(column);
  const text = typeof value === "number" ? value.toLocaleString("en-US") : value ?? "";
  return element("td", text, numeric ? "num" : "");
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
  for (const id of ["direction", "depth", "deleted", "colour", "columns"]) {
    $(id).addEventListener("change", showLineage);
  }
  $("path-form").addEventListener("submit", (event) => { event.preventDefault(); showPaths(); });
}

main();
