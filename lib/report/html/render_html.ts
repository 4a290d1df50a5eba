/**
 * The HTML form of a report: one self-contained file. Inline CSS, inline script, SVG drawn by
 * that script from JSON embedded in the page; a Content-Security-Policy that allows no network
 * at all, so opening the file never fetches anything. Tables and text are static HTML (readable
 * without the script); a `<noscript>` note stands in for the charts. Pure.
 * @module
 */
import type { Block, ChartSpec, ReportDoc } from "../document/doc.ts";
import { CHART_SCRIPT } from "./chart_script.ts";
import { escapeHtml as h, jsonForScript } from "./escape_html.ts";
import { PAGE_CSS, SERIES_COLORS } from "./page_style.ts";

/** The page's policy: nothing may load from anywhere; only the inline style and script run. */
export const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

// A number (or "-", or "11/0"), optionally with its [CI] and a short unit: right-aligned.
const NUMERIC = /^(-|[-+]?(\d|\.\d)[\d.,/]*(e[-+]?\d+)?)( \[[^\]]*\])?( [^\s\d]\S{0,8})?$/i;

function tableHtml(head: string[], rows: string[][], caption?: string): string {
  const th = head.map((c) => `<th>${h(c)}</th>`).join("");
  const body = rows.map((r) => `<tr>${head.map((_, i) => {
    const c = r[i] ?? "";
    const cls = NUMERIC.test(c) ? " class=\"num\"" : c.length > 60 ? " class=\"wrap\"" : "";
    return `<td${cls}>${h(c)}</td>`;
  }).join("")}</tr>`).join("\n");
  return `<div class="table-wrap"><table><thead><tr>${th}</tr></thead><tbody>\n${body}\n</tbody></table></div>${caption ? `<p class="caption">${h(caption)}</p>` : ""}`;
}

function legendHtml(c: ChartSpec): string {
  const items = c.series.map((s, i) => `<span><span class="sw" style="background:${SERIES_COLORS[i % SERIES_COLORS.length]}"></span>${h(s.name)}${typeof s.n === "number" ? ` (n=${s.n})` : ""}</span>`);
  for (const l of c.hlines ?? []) items.push(`<span><span class="sw slo-sw"></span>${h(l.label)}</span>`);
  for (const m of c.marks ?? []) items.push(`<span><span class="sw nstar-sw"></span>${h(m.label)}</span>`);
  return `<div class="legend">${items.join("")}</div>`;
}

function figureHtml(c: ChartSpec, k: number): string {
  const n = c.series.reduce((s, x) => s + x.points.length, 0);
  return `<figure class="chart" id="chart-${k}" data-kind="${c.kind}" data-expected-points="${n}"><figcaption>${h(c.title)}</figcaption>` +
    `<div class="chart-slot"><noscript><p class="note">The chart needs JavaScript; its numbers are in the table beside it.</p></noscript></div>${legendHtml(c)}</figure>`;
}

function blockHtml(b: Block, chartIndex: () => number): string {
  switch (b.kind) {
    case "heading":
      return `<h${b.level}>${h(b.text)}</h${b.level}>`;
    case "para":
      return `<p${b.tone ? ` class="${b.tone}"` : ""}>${h(b.text)}</p>`;
    case "facts":
      return `<dl class="facts">${b.items.map(([k, v]) => `<dt>${h(k)}</dt><dd>${h(v)}</dd>`).join("")}</dl>`;
    case "list":
      return `<ul>${b.items.map((i) => `<li>${h(i)}</li>`).join("")}</ul>`;
    case "table":
      return tableHtml(b.head, b.rows, b.caption);
    case "chart":
      return figureHtml(b.chart, chartIndex());
  }
}

/** The chart specs as the page script reads them: each series with its colour. */
export function chartData(doc: ReportDoc): ChartSpec[] {
  return doc.blocks.flatMap((b) => (b.kind === "chart" ? [b.chart] : [])).map((c) => ({
    ...c,
    series: c.series.map((s, i) => ({ ...s, color: SERIES_COLORS[i % SERIES_COLORS.length] })),
  }));
}

/**
 * Renders a report as one HTML page.
 * @param generator the line under the title (`ik 0.1.0`)
 */
export function renderHtml(doc: ReportDoc, generator: string): string {
  let k = 0;
  const body = doc.blocks.map((b) => blockHtml(b, () => k++)).join("\n");
  return `<!DOCTYPE html>
<html lang="en" data-rendered="pending">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${PAGE_CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${h(doc.title)}</title>
<style>${PAGE_CSS}</style>
</head>
<body>
<header><h1>${h(doc.title)}</h1><p class="gen">${h(generator)}</p></header>
<main>
${body}
</main>
<script type="application/json" id="ik-chart-data">${jsonForScript(chartData(doc))}</script>
<script>${CHART_SCRIPT}</script>
</body>
</html>
`;
}
