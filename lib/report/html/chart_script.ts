/**
 * The report page's own script (plain ES2017, no library, nothing fetched). It reads the chart
 * specs from the page's `<script type="application/json" id="ik-chart-data">`, draws each chart
 * as SVG into its `<figure id="chart-K">`, one per task so a long page stays responsive, and
 * only when every chart drew at least one point without an exception sets
 * `data-rendered="ok"` on `<html>` (else `"error"`). Each `<svg>` carries `data-points`, the
 * points it drew. All text goes in through `textContent`, never as markup.
 * @module
 */

/** The script, as inlined into the page. */
export const CHART_SCRIPT = String.raw`(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var W = 760, H = 400, M = { l: 72, r: 24, t: 18, b: 54 };
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) if (Object.prototype.hasOwnProperty.call(attrs, k)) e.setAttribute(k, String(attrs[k]));
    if (parent) parent.appendChild(e);
    return e;
  }
  function txt(parent, x, y, s, attrs) {
    var a = attrs || {};
    a.x = x; a.y = y;
    var t = el("text", a, parent);
    t.textContent = String(s);
    return t;
  }
  function fmt(v) {
    if (!isFinite(v)) return String(v);
    if (Math.abs(v) >= 1000) return v.toFixed(0);
    return String(Number(v.toPrecision(3)));
  }
  function ticks(lo, hi, n) {
    var span = hi - lo;
    var step = Math.pow(10, Math.floor(Math.log(span / n) / Math.LN10));
    var err = (n / span) * step;
    if (err <= 0.15) step *= 10; else if (err <= 0.35) step *= 5; else if (err <= 0.75) step *= 2;
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9 && out.length < 50; v += step) out.push(Number(v.toPrecision(12)));
    return out;
  }
  function domain(vals, zero) {
    var lo = Infinity, hi = -Infinity;
    for (var i = 0; i < vals.length; i++) { if (vals[i] < lo) lo = vals[i]; if (vals[i] > hi) hi = vals[i]; }
    if (zero && lo > 0) lo = 0;
    if (hi === lo) { var d = Math.abs(hi) * 0.1 || 1; return [lo - d, hi + d]; }
    var pad = (hi - lo) * 0.06;
    return [zero && lo === 0 ? 0 : lo - pad, hi + pad];
  }
  function finitePoints(s) {
    return (s.points || []).filter(function (p) { return typeof p.x === "number" && isFinite(p.x) && typeof p.y === "number" && isFinite(p.y); });
  }
  function draw(spec, fig) {
    var cdf = spec.kind === "cdf";
    var series = (spec.series || []).map(function (s) { return { name: s.name, color: s.color, points: finitePoints(s) }; });
    var xs = [], ys = [];
    series.forEach(function (s) { s.points.forEach(function (p) { xs.push(p.x); ys.push(p.y); }); });
    (spec.marks || []).forEach(function (m) { xs.push(m.x); ys.push(m.y); });
    (spec.hlines || []).forEach(function (h) { ys.push(h.y); });
    if (!xs.length) throw new Error("no points to draw");
    var xd = domain(xs, !cdf), yd = cdf ? [0, 1.02] : domain(ys, true);
    var pw = W - M.l - M.r, ph = H - M.t - M.b;
    function sx(v) { return M.l + ((v - xd[0]) / (xd[1] - xd[0])) * pw; }
    function sy(v) { return M.t + ph - ((v - yd[0]) / (yd[1] - yd[0])) * ph; }
    var svg = el("svg", { viewBox: "0 0 " + W + " " + H, "class": "chart-svg", role: "img", "aria-label": spec.title });
    var g = el("g", { "class": "axes" }, svg);
    ticks(xd[0], xd[1], 7).forEach(function (v) {
      if (v < xd[0] || v > xd[1]) return;
      el("line", { x1: sx(v), x2: sx(v), y1: M.t, y2: M.t + ph, "class": "grid" }, g);
      txt(g, sx(v), M.t + ph + 16, fmt(v), { "text-anchor": "middle", "class": "tick" });
    });
    ticks(yd[0], yd[1], 6).forEach(function (v) {
      if (v < yd[0] || v > yd[1]) return;
      el("line", { x1: M.l, x2: M.l + pw, y1: sy(v), y2: sy(v), "class": "grid" }, g);
      txt(g, M.l - 6, sy(v) + 4, fmt(v), { "text-anchor": "end", "class": "tick" });
    });
    el("rect", { x: M.l, y: M.t, width: pw, height: ph, "class": "frame" }, g);
    txt(g, M.l + pw / 2, H - 14, spec.x.label, { "text-anchor": "middle", "class": "axis-label" });
    txt(g, 0, 0, spec.y.label, { "text-anchor": "middle", "class": "axis-label", transform: "translate(18," + (M.t + ph / 2) + ") rotate(-90)" });
    (spec.hlines || []).forEach(function (h) {
      var y = sy(h.y);
      el("line", { x1: M.l, x2: M.l + pw, y1: y, y2: y, "class": "slo" }, svg);
      txt(svg, M.l + pw - 6, y - 6, h.label, { "text-anchor": "end", "class": "slo-label" });
    });
    var drawn = 0;
    series.forEach(function (s) {
      if (!s.points.length) return;
      var d = "";
      if (cdf) {
        d = "M" + sx(s.points[0].x) + "," + sy(0);
        s.points.forEach(function (p) { d += "H" + sx(p.x) + "V" + sy(p.y); });
      } else {
        s.points.forEach(function (p, k) { d += (k ? "L" : "M") + sx(p.x) + "," + sy(p.y); });
      }
      el("path", { d: d, "class": "series", stroke: s.color }, svg);
      var gp = el("g", { "class": "points", "data-series": s.name }, svg);
      s.points.forEach(function (p) {
        var dot = el("circle", { cx: sx(p.x), cy: sy(p.y), r: cdf ? 1.8 : 4.5, fill: s.color, "class": "pt" }, gp);
        var tip = el("title", {}, dot);
        tip.textContent = (p.label ? p.label + ": " : s.name + ": ") + spec.x.label + " " + fmt(p.x) + ", " + spec.y.label + " " + fmt(p.y);
        if (!cdf && p.label) txt(gp, sx(p.x) + 7, sy(p.y) - 8, p.label, { "class": "pt-label" });
        drawn++;
      });
    });
    (spec.marks || []).forEach(function (m) {
      el("circle", { cx: sx(m.x), cy: sy(m.y), r: 10, "class": "nstar" }, svg);
      txt(svg, sx(m.x), sy(m.y) + 26, m.label, { "text-anchor": "middle", "class": "nstar-label" });
    });
    svg.setAttribute("data-points", String(drawn));
    var slot = fig.querySelector(".chart-slot");
    if (!slot) throw new Error("the figure has no chart slot");
    slot.replaceWith(svg);
    return drawn;
  }
  function main() {
    var root = document.documentElement;
    var specs;
    try {
      var data = document.getElementById("ik-chart-data");
      specs = JSON.parse(data ? data.textContent : "[]");
    } catch (e) {
      root.setAttribute("data-rendered", "error");
      return;
    }
    var failed = 0, i = 0;
    function next() {
      if (i >= specs.length) {
        root.setAttribute("data-charts-drawn", String(specs.length - failed));
        root.setAttribute("data-rendered", failed ? "error" : "ok");
        return;
      }
      var k = i++;
      var fig = document.getElementById("chart-" + k);
      try {
        if (!fig) throw new Error("no figure chart-" + k);
        if (!(draw(specs[k], fig) > 0)) throw new Error("no point drawn");
        fig.setAttribute("data-drawn", "ok");
      } catch (e) {
        failed++;
        if (fig) {
          fig.setAttribute("data-drawn", "error");
          var p = document.createElement("p");
          p.className = "chart-error";
          p.textContent = "This chart could not be drawn: " + (e && e.message ? e.message : String(e));
          fig.appendChild(p);
        }
      }
      setTimeout(next, 0);
    }
    next();
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", main);
  else main();
})();`;
