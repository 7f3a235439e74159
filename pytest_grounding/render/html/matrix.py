"""The board page's significance tiers and sample x model matrix (issue 49), one section per
benchmark. The matrix's data sits in the page as JSON and a small script draws one page of rows
at a time (100), so that ScreenSpot-Pro's 1,581 samples x 10 models stay quick; it sorts, filters
(every model misses, every model hits, models disagree, only one model hits, only a chosen model
hits) and searches ids, and each cell links to the sample in that run's HTML page (a miss, wrong
format or error at its gallery entry: page.sample_anchor). No external asset: the page stays
self-contained."""

from __future__ import annotations

import json
from html import escape
from typing import Any

from ...analysis import matrix as sample_matrix
from ...analysis import tiers as significance
from ...core.numbers import pct, points
from ...core.safetext import terminal_line
from ..common.board import TIERS_SAID

PAGE_ROWS = 100

MATRIX_CSS = """
table.tiers td,table.tiers th{padding:3px 8px}
table.pairs{font-size:12px}
.tier{display:inline-block;min-width:22px;padding:0 4px;border-radius:3px;background:#e8eefb;font-weight:600;
text-align:center}
.matrix-controls{display:flex;flex-wrap:wrap;gap:10px;align-items:center;margin:8px 0}
table.matrix{font-size:12px;border-collapse:collapse}
table.matrix td,table.matrix th{padding:2px 6px;border-bottom:1px solid #e3e6ea}
table.matrix td.o{text-align:center;min-width:28px}
td.o-hit{background:#d9f2e1}td.o-miss{background:#fbdde4}td.o-wrong_format{background:#fde9cf}
td.o-error{background:#e4e4e4}td.o-none{color:#9aa3af}
table.matrix td.o a{color:inherit;text-decoration:none;display:block}
"""

MATRIX_SCRIPT = """
(function () {
  var SYMBOL = {hit: "\\u2713", miss: "\\u2717", wrong_format: "?", error: "!"};
  var RANK = {hit: 0, miss: 1, wrong_format: 2, error: 3};
  function hex(text) {
    var bytes = new TextEncoder().encode(text), out = "";
    for (var i = 0; i < bytes.length; i++) { out += (bytes[i] < 16 ? "0" : "") + bytes[i].toString(16); }
    return out;
  }
  function node(tag, attrs, text) {
    var el = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { el.setAttribute(k, attrs[k]); });
    if (text !== undefined) { el.textContent = text; }
    return el;
  }
  document.querySelectorAll("section.matrix").forEach(function (section) {
    var data = JSON.parse(section.querySelector("script.matrix-data").textContent);
    var names = data.detectors, rows = data.samples, page = 0, shown = rows;
    var filter = section.querySelector("select.filter"), sort = section.querySelector("select.sort");
    var search = section.querySelector("input.search"), body = section.querySelector("tbody");
    var count = section.querySelector(".count"), where = section.querySelector(".where");
    var size = parseInt(section.getAttribute("data-page-rows"), 10);
    rows.forEach(function (r, i) {
      r.order = i;
      r.hits = r.outcomes.filter(function (o) { return o === "hit"; }).length;
      r.scored = r.outcomes.filter(function (o) { return o && o !== "error"; }).length;
    });
    function keep(r) {
      var f = filter.value, q = search.value.trim().toLowerCase();
      if (q && r.id.toLowerCase().indexOf(q) < 0 && r.instruction.toLowerCase().indexOf(q) < 0) { return false; }
      if (f === "all-miss") { return r.scored > 0 && r.hits === 0; }
      if (f === "all-hit") { return r.hits === names.length; }
      if (f === "disagree") { return r.hits > 0 && r.hits < r.scored; }
      if (f === "one") { return r.hits === 1; }
      if (f.indexOf("only:") === 0) { return r.hits === 1 && r.outcomes[parseInt(f.slice(5), 10)] === "hit"; }
      return true;
    }
    function key(r) {
      var s = sort.value;
      if (s === "hits-up") { return [r.hits, r.order]; }
      if (s === "hits-down") { return [-r.hits, r.order]; }
      if (s === "id") { return [r.id, r.order]; }
      if (s.indexOf("by:") === 0) {
        var o = r.outcomes[parseInt(s.slice(3), 10)];
        return [o in RANK ? RANK[o] : 4, r.order];
      }
      return [r.order, 0];
    }
    function compare(a, b) {
      var ka = key(a), kb = key(b);
      for (var i = 0; i < ka.length; i++) { if (ka[i] < kb[i]) { return -1; } if (ka[i] > kb[i]) { return 1; } }
      return 0;
    }
    function draw() {
      var pages = Math.max(1, Math.ceil(shown.length / size));
      page = Math.min(page, pages - 1);
      body.textContent = "";
      shown.slice(page * size, (page + 1) * size).forEach(function (r) {
        var tr = node("tr", {"data-id": r.id});
        tr.appendChild(node("td", {"class": "mono"}, r.dataset + "/" + r.id));
        tr.appendChild(node("td", {}, r.instruction));
        r.outcomes.forEach(function (o, i) {
          var td = node("td", {"class": "o o-" + (o || "none"), title: names[i] + ": " + (o || "not in this run")});
          var link = data.links[i];
          if (o && link) {
            var anchor = o === "hit" ? "" : "#sample-" + hex(data.specs[i] + "\\n" + r.dataset + "\\n" + r.uid);
            td.appendChild(node("a", {href: link + anchor}, SYMBOL[o] || o));
          } else { td.textContent = o ? (SYMBOL[o] || o) : "-"; }
          tr.appendChild(td);
        });
        body.appendChild(tr);
      });
      count.textContent = String(shown.length);
      where.textContent = "page " + (page + 1) + " of " + pages;
    }
    function apply() { shown = rows.filter(keep).sort(compare); page = 0; draw(); }
    [filter, sort].forEach(function (el) { el.addEventListener("change", apply); });
    search.addEventListener("input", apply);
    var prev = section.querySelector("button.prev"), next = section.querySelector("button.next");
    prev.addEventListener("click", function () { page = Math.max(0, page - 1); draw(); });
    next.addEventListener("click", function () { page += 1; draw(); });
    var wanted = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (wanted.get("matrix")) { filter.value = wanted.get("matrix"); }
    apply();
    section.setAttribute("data-ready", "1");
  });
})();
"""


def e(value: object) -> str:
    return escape(terminal_line(value), quote=True)


def tiers_html(found: significance.Tiers) -> str:
    """The ranking with its tiers, then the pairwise tests behind them in a <details>."""
    rows = []
    for r in found.ranked:
        tier = f'<span class="tier">{r.tier}</span>' if r.tier is not None else f'<span title="{e(r.reason)}">-</span>'
        rows.append(
            f'<tr data-tier="{"" if r.tier is None else r.tier}"><td>{r.rank}</td><td>{tier}</td>'
            f"<td>{e(r.name)}{'<br><span class=muted>' + e(r.reason) + '</span>' if r.reason else ''}</td>"
            f"<td>{e(pct(r.accuracy))}</td><td>{r.scored}</td></tr>"
        )
    pairs = "".join(
        f"<tr><td>{e(p.better)}</td><td>{e(p.worse)}</td><td>{p.n}</td><td>{p.wins}</td><td>{p.losses}</td>"
        f"<td>{p.p_value:.3g}</td><td>{p.p_holm:.3g}</td>"
        f"<td>{'-' if p.difference is None else e(f'{points(p.difference.delta)} points, {p.difference.bounds()}')}"
        f"</td><td>{'differ' if p.significant else 'tied'}</td></tr>"
        for p in found.pairs
    )
    notes = "".join(f"<li>{e(n)}</li>" for n in found.notes)
    return (
        f'<p class="muted">{e(TIERS_SAID[0].upper() + TIERS_SAID[1:])}.</p>'
        '<table class="tiers"><thead><tr><th>rank</th><th>tier</th><th>configuration</th><th>accuracy</th>'
        f"<th>n</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        + (
            f"<details class='pairs'><summary>{len(found.pairs)} pairwise tests</summary>"
            "<table class='pairs'><thead><tr>"
            "<th>better</th><th>worse</th><th>paired</th><th>only better hit</th><th>only worse hit</th><th>p</th>"
            f"<th>p (Holm)</th><th>difference</th><th></th></tr></thead><tbody>{pairs}</tbody></table></details>"
            if found.pairs
            else ""
        )
        + (f"<ul>{notes}</ul>" if notes else "")
    )


def _embedded(data: Any) -> str:
    """JSON inert inside a <script> element: no `<` survives to close it."""
    return json.dumps(data, separators=(",", ":")).replace("<", "\\u003c").replace("&", "\\u0026")


def matrix_html(index: int, found: sample_matrix.Matrix, links: list[str], specs: list[str]) -> str:
    """`links`: each column's run page, relative to the board (empty where there is none); `specs`:
    each column's detector spec as its records name it (the gallery's anchors use it)."""
    data = sample_matrix.as_dict(found)
    data.update(links=links, specs=specs)
    wins = found.unique_wins()
    filters = [
        ("", f"every sample ({len(found.rows)})"),
        ("all-miss", f"every model misses ({found.all_miss()})"),
        ("all-hit", f"every model hits ({found.all_hit()})"),
        ("disagree", "models disagree"),
        ("one", f"only one model hits ({sum(wins.values())})"),
        *((f"only:{i}", f"only {name} hits ({wins[name]})") for i, name in enumerate(found.columns)),
    ]
    sorts = [("order", "dataset order"), ("id", "id"), ("hits-up", "fewest hits first"), ("hits-down", "most hits")]
    sorts += [(f"by:{i}", f"{name}: hits first") for i, name in enumerate(found.columns)]
    # each column named (issue 61), in the tiers' order (analysis/board.py builds it so)
    head = "".join(f"<th class='model' title='{e(name)}'>{e(name)}</th>" for name in found.columns)
    key = "".join(f"<li>{e(name)} ({wins[name]} unique wins)</li>" for name in found.columns)
    return (
        f'<section class="matrix" id="matrix-{index}" data-page-rows="{PAGE_ROWS}">'
        f'<script type="application/json" class="matrix-data">{_embedded(data)}</script>'
        f"<details class='key'><summary>columns</summary><ol class='muted' style='list-style:none'>{key}</ol></details>"
        '<div class="matrix-controls"><label>show <select class="filter">'
        + "".join(f'<option value="{e(v)}">{e(t)}</option>' for v, t in filters)
        + '</select></label><label>sort <select class="sort">'
        + "".join(f'<option value="{e(v)}">{e(t)}</option>' for v, t in sorts)
        + '</select></label><label>id or instruction <input class="search" type="search"></label>'
        '<span><b class="count">0</b> samples</span><button class="prev" type="button">previous</button>'
        '<span class="where"></span><button class="next" type="button">next</button></div>'
        f'<table class="matrix"><thead><tr><th>sample</th><th>instruction</th>{head}</tr></thead><tbody></tbody>'
        "</table><p class='muted'>✓ hit · ✗ miss · ? no usable answer (wrong format) · ! error (not scored) · - not "
        "in that run. A cell opens the run's page (a miss, wrong format or error at its entry).</p></section>"
    )
