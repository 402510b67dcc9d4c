// clawhost's operator's page: usage charts (uPlot), the audit search and
// the live part's refresh. Everything it fetches is this server's JSON.
"use strict";
(function () {
  var palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
  var charts = [];

  function $(id) { return document.getElementById(id); }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function money(v) { return "$" + (v || 0).toFixed(4); }
  function getJSON(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      return r.json().then(function (b) {
        if (!r.ok) throw new Error(b.error || r.statusText);
        return b;
      });
    });
  }

  // ---- usage over time ----
  function usageQuery() {
    var f = $("usage-filter"), p = new URLSearchParams();
    ["by", "days", "person", "chat", "agent"].forEach(function (n) {
      var v = f.elements[n].value;
      if (v) p.set(n, v);
    });
    return p.toString();
  }

  function fillSelect(sel, keys) {
    var cur = sel.value;
    while (sel.options.length > 1) sel.remove(1);
    (keys || []).forEach(function (k) { sel.add(new Option(k, k)); });
    if (cur && (keys || []).indexOf(cur) < 0) sel.add(new Option(cur, cur));
    sel.value = cur;
  }

  function chartWidth() {
    var box = $("usage");
    return Math.max(260, Math.min(box.clientWidth - 8, 1100));
  }

  function draw(target, title, d, field, budgets) {
    var xs = d.days.map(function (day) { return Date.parse(day + "T12:00:00Z") / 1000; });
    var data = [xs], series = [{}];
    d.series.forEach(function (s, i) {
      data.push(s[field]);
      series.push({ label: s.key, stroke: palette[i % palette.length], width: 2, points: { show: true, size: 5 } });
    });
    (budgets || []).forEach(function (b) {
      data.push(xs.map(function () { return b.limit_usd; }));
      series.push({ label: "budget " + b.scope + (b.agent ? " (" + b.agent + ")" : "") + " " + money(b.limit_usd) + "/" + (b.scope === "agent" ? "month" : "day"),
        stroke: "#b00", dash: [6, 4], width: 1.5, points: { show: false } });
    });
    var opts = {
      title: title, width: chartWidth(), height: 220, series: series,
      scales: { x: { time: true } },
      axes: [{}, { size: 60, values: field === "cost_usd" ? function (u, vs) { return vs.map(function (v) { return "$" + v; }); } : undefined }],
      legend: { live: false },
    };
    target.textContent = "";
    if (!d.series.length) {
      target.appendChild(el("p", { "class": "none" }, "No turns in this period."));
      return;
    }
    charts.push(new uPlot(opts, data, target));
  }

  function renderUsage(d) {
    window.clawhostUsage = d;
    charts.forEach(function (c) { c.destroy(); });
    charts = [];
    var f = $("usage-filter");
    fillSelect(f.elements.person, d.keys.person);
    fillSelect(f.elements.chat, d.keys.chat);
    fillSelect(f.elements.agent, d.keys.agent);
    // An agent's budget is a month's: drawn only on the person and chat
    // charts' per-day scale would mislead, so it is listed below.
    var daily = (d.budgets || []).filter(function (b) { return b.scope !== "agent"; });
    draw($("chart-cost"), "cost per day by " + d.by, d, "cost_usd", daily);
    draw($("chart-turns"), "turns per day by " + d.by, d, "turns", []);
    var q = usageQuery();
    $("usage-csv").href = "/usage/daily.csv" + (q ? "?" + q : "");
    var near = $("usage-near");
    near.textContent = "";
    (d.near || []).forEach(function (n) {
      near.appendChild(el("li", { "class": n.over ? "bad" : "warn", "data-key": n.key },
        n.key + " — " + money(n.spent_usd) + " of " + money(n.limit_usd) + " (" + n.scope + (n.scope === "agent" ? " budget this month" : " budget today") +
        (n.agent ? ", agent " + n.agent : "") + (n.over ? "): spent" : "): near")));
    });
    if (!near.children.length) near.appendChild(el("li", { "class": "none" }, "Nobody is near a budget."));
    var tb = $("usage-table");
    tb.textContent = "";
    d.series.forEach(function (s) {
      var tr = el("tr");
      tr.appendChild(el("td", {}, s.key));
      tr.appendChild(el("td", { "class": "n" }, String(s.turns.reduce(function (a, b) { return a + b; }, 0))));
      tr.appendChild(el("td", { "class": "n" }, money(s.cost_usd.reduce(function (a, b) { return a + b; }, 0))));
      tb.appendChild(tr);
    });
    $("usage").setAttribute("data-rendered", q);
  }

  function loadUsage() {
    var q = usageQuery();
    var u = new URL(location.href);
    ["by", "days", "person", "chat", "agent"].forEach(function (n) { u.searchParams.delete(n); });
    new URLSearchParams(q).forEach(function (v, k) { u.searchParams.set(k, v); });
    history.replaceState(null, "", u.pathname + u.search + u.hash);
    return getJSON("/usage/daily.json" + (q ? "?" + q : "")).then(renderUsage).catch(function (e) {
      $("usage-error").textContent = "The usage could not be read: " + e.message;
    });
  }

  // ---- audit trail ----
  var auditPage = 1;
  function loadAudit() {
    var f = $("audit-filter"), p = new URLSearchParams();
    ["q", "who", "chat", "kind", "since", "until"].forEach(function (n) {
      var v = f.elements[n].value.trim();
      if (v) p.set(n, v);
    });
    p.set("page", auditPage);
    return getJSON("/audit/search.json?" + p.toString()).then(function (a) {
      window.clawhostAudit = a;
      fillSelect(f.elements.kind, a.kinds);
      var tb = $("audit-rows");
      tb.textContent = "";
      a.rows.forEach(function (e) {
        var tr = el("tr");
        [new Date(e.at).toLocaleString(), e.kind, e.actor, e.chat || "", e.subject, e.decision, e.detail || ""].forEach(function (v) { tr.appendChild(el("td", {}, v)); });
        tb.appendChild(tr);
      });
      $("audit-pages").textContent = a.total + " rows · page " + a.page + " of " + a.pages;
      $("audit-prev").disabled = a.page <= 1;
      $("audit-next").disabled = a.page >= a.pages;
      $("audit").setAttribute("data-page", a.page);
    }).catch(function (e) { $("audit-pages").textContent = "The audit trail could not be read: " + e.message; });
  }

  // ---- live: the status part refreshes every 5 s ----
  function refreshLive() {
    if (document.hidden) return;
    var live = $("live");
    if (!live || live.contains(document.activeElement) && document.activeElement !== document.body) return;
    fetch(location.pathname + location.search, { credentials: "same-origin" }).then(function (r) { return r.text(); }).then(function (html) {
      var next = new DOMParser().parseFromString(html, "text/html").getElementById("live");
      if (next) live.innerHTML = next.innerHTML;
    }).catch(function () {});
  }

  document.addEventListener("DOMContentLoaded", function () {
    var uf = $("usage-filter");
    if (uf) {
      var params = new URLSearchParams(location.search);
      ["by", "days", "person", "chat", "agent"].forEach(function (n) {
        var v = params.get(n);
        if (v) {
          if (uf.elements[n].tagName === "SELECT" && !Array.prototype.some.call(uf.elements[n].options, function (o) { return o.value === v; })) uf.elements[n].add(new Option(v, v));
          uf.elements[n].value = v;
        }
      });
      uf.addEventListener("change", loadUsage);
      uf.addEventListener("submit", function (e) { e.preventDefault(); loadUsage(); });
      loadUsage();
      var t;
      window.addEventListener("resize", function () {
        clearTimeout(t);
        t = setTimeout(function () { charts.forEach(function (c) { c.setSize({ width: chartWidth(), height: 220 }); }); }, 150);
      });
    }
    var af = $("audit-filter");
    if (af) {
      af.addEventListener("submit", function (e) { e.preventDefault(); auditPage = 1; loadAudit(); });
      $("audit-prev").addEventListener("click", function () { auditPage--; loadAudit(); });
      $("audit-next").addEventListener("click", function () { auditPage++; loadAudit(); });
      loadAudit();
    }
    document.querySelectorAll(".copy").forEach(function (b) {
      b.addEventListener("click", function () { navigator.clipboard && navigator.clipboard.writeText(b.getAttribute("data-text")); });
    });
    setInterval(refreshLive, 5000);
  });
})();
