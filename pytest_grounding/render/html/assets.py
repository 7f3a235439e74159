"""The page's style sheet and its one script (vanilla JS: the gallery's filters and sort). The
filters live in the address's fragment too (#outcome=miss&app=Excel), so a filtered view can be
linked to, and opened that way by a headless browser in the tests."""

CSS = """
body{font:14px/1.4 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d232b;background:#f6f7f9}
header,main{max-width:1280px;margin:0 auto;padding:0 20px}
header{padding-top:16px}
h1{font-size:22px;margin:8px 0}
h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #d8dce2;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.partial{background:#b3261e;color:#fff;font-weight:600;padding:10px 14px;border-radius:6px;margin:10px 0}
.note{background:#fff6d6;border:1px solid #ecd98b;padding:6px 10px;border-radius:6px;margin:6px 0}
table{border-collapse:collapse;background:#fff;margin:4px 0 10px;font-size:13px}
th,td{padding:3px 9px;border-bottom:1px solid #e6e8ec;text-align:left;vertical-align:top}
th{background:#eef0f4;font-weight:600}
td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.block p.mono{margin:3px 0}
.pass{color:#1b7a3a;font-weight:600}.fail{color:#b3261e;font-weight:700}
.muted{color:#69717d}.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.figures{display:flex;flex-wrap:wrap;gap:12px}
.figure{background:#fff;border:1px solid #e1e4e8;border-radius:6px}
.block{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:6px 14px 10px;margin:10px 0}
.tables{display:flex;flex-wrap:wrap;gap:0 18px}
.scroll{max-height:320px;overflow:auto}
.controls{position:sticky;top:0;background:#f6f7f9;padding:8px 0;z-index:2;display:flex;flex-wrap:wrap;gap:8px;
 align-items:center;border-bottom:1px solid #d8dce2}
.controls label{font-size:12px;color:#4a525c}
.controls select{font-size:13px;margin-left:3px;max-width:180px}
#gallery{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:12px;margin:12px 0 40px}
.entry{background:#fff;border:1px solid #e1e4e8;border-radius:6px;padding:8px;display:flex;gap:10px}
.entry[hidden]{display:none}
.pics{display:flex;flex-direction:column;gap:6px;flex:none}
.shot{background-size:100% 100%;background-color:#dfe3e8;border:1px solid #c9ced6;display:block}
.missing{display:flex;align-items:center;justify-content:center;text-align:center;width:300px;height:120px;
 background:repeating-linear-gradient(45deg,#eee,#eee 8px,#e2e2e2 8px,#e2e2e2 16px);color:#7a3a3a;
 font-size:12px;padding:6px;box-sizing:border-box;word-break:break-all}
.facts{min-width:0;font-size:13px}
.facts p{margin:2px 0}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:12px;font-weight:600;color:#fff}
.o-miss{background:#c2413b}.o-wrong_format{background:#b7791f}.o-error{background:#6b21a8}
.raw,.err{white-space:pre-wrap;word-break:break-word;background:#f3f4f6;padding:3px 6px;border-radius:4px;
 max-height:110px;overflow:auto;margin:3px 0}
.err{background:#fbeaea}
.key span{display:inline-block;margin-right:12px}
"""

SCRIPT = """
(function () {
  "use strict";
  var gallery = document.getElementById("gallery");
  if (!gallery) { document.body.setAttribute("data-ready", "1"); return; }
  var entries = Array.prototype.slice.call(gallery.querySelectorAll(".entry"));
  var selects = Array.prototype.slice.call(document.querySelectorAll("select[data-filter]"));
  var sort = document.getElementById("sort");
  var shown = document.getElementById("shown");

  function distance(entry) {
    var value = parseFloat(entry.getAttribute("data-distance"));
    return isNaN(value) ? null : value;
  }
  function order() {
    var how = sort.value;
    var list = entries.slice();
    if (how !== "report") {
      list.sort(function (a, b) {
        var da = distance(a), db = distance(b);
        if (da === null || db === null) { return (da === null) - (db === null); }
        return how === "near" ? da - db : db - da;
      });
    }
    list.forEach(function (entry) { gallery.appendChild(entry); });
  }
  function apply() {
    var count = 0;
    entries.forEach(function (entry) {
      var keep = selects.every(function (s) {
        return !s.value || entry.getAttribute("data-" + s.getAttribute("data-filter")) === s.value;
      });
      entry.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = String(count);
  }
  function toHash() {
    var parts = selects.filter(function (s) { return s.value; }).map(function (s) {
      return encodeURIComponent(s.getAttribute("data-filter")) + "=" + encodeURIComponent(s.value);
    });
    if (sort.value !== "report") { parts.push("sort=" + encodeURIComponent(sort.value)); }
    try {
      history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
    } catch (e) { /* a page opened where the address cannot change: the view still filters */ }
  }
  function fromHash() {
    location.hash.replace(/^#/, "").split("&").forEach(function (part) {
      if (!part) { return; }
      var pair = part.split("=");
      var key = decodeURIComponent(pair[0]), value = decodeURIComponent(pair.slice(1).join("="));
      if (key === "sort") { sort.value = value; return; }
      selects.forEach(function (s) { if (s.getAttribute("data-filter") === key) { s.value = value; } });
    });
  }
  selects.forEach(function (s) { s.addEventListener("change", function () { apply(); toHash(); }); });
  sort.addEventListener("change", function () { order(); toHash(); });
  fromHash();
  order();
  apply();
  document.body.setAttribute("data-ready", "1");
})();
"""
