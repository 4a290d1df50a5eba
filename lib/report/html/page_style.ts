/**
 * The report page's inline stylesheet: system fonts only (nothing fetched), readable tables that
 * scroll sideways on a narrow screen, chart colours, and a print layout.
 * @module
 */

/** Series colours, shared by the legend (HTML) and the drawing script (SVG). */
export const SERIES_COLORS: readonly string[] = [
  "#1f6fb4", "#d1462f", "#2a9d4b", "#8a4fbf", "#e08a1e", "#169fb0", "#8c564b", "#c2409a", "#5f6b73", "#9a9a1f",
];

/** The stylesheet. */
export const PAGE_CSS = `
:root { --fg: #1d2329; --muted: #5c6770; --line: #d8dee4; --bg: #ffffff; --head: #f3f5f7; --warn: #9a3412; --warn-bg: #fff4e5; --slo: #c62828; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--fg); background: var(--bg); font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
header { padding: 20px 28px 8px; border-bottom: 1px solid var(--line); }
header h1 { margin: 0 0 4px; font-size: 20px; word-break: break-all; }
header .gen { margin: 0; color: var(--muted); font-size: 12px; }
main { padding: 4px 28px 40px; max-width: 1400px; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-top: 12px; border-top: 2px solid var(--line); word-break: break-word; }
main > h2:first-child { border-top: none; margin-top: 12px; }
h3 { font-size: 15px; margin: 22px 0 6px; }
h4 { font-size: 13px; margin: 14px 0 4px; color: var(--muted); }
p { margin: 6px 0; max-width: 110ch; overflow-wrap: anywhere; }
p.warn { color: var(--warn); background: var(--warn-bg); padding: 6px 10px; border-left: 3px solid var(--warn); }
p.note { color: var(--muted); font-style: italic; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 8px 0; }
dl.facts dt { color: var(--muted); }
dl.facts dd { margin: 0; overflow-wrap: anywhere; }
ul { margin: 6px 0; padding-left: 22px; max-width: 120ch; }
li { overflow-wrap: anywhere; }
.table-wrap { overflow-x: auto; margin: 6px 0; }
table { border-collapse: collapse; font-size: 12.5px; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; white-space: nowrap; }
td.wrap { white-space: normal; min-width: 24ch; max-width: 70ch; overflow-wrap: anywhere; }
th { background: var(--head); font-weight: 600; }
td.num { text-align: right; }
.caption { color: var(--muted); font-size: 12px; margin: 2px 0 10px; }
figure.chart { margin: 10px 0 4px; max-width: 860px; border: 1px solid var(--line); border-radius: 4px; padding: 8px 8px 4px; }
figure.chart figcaption { font-weight: 600; margin: 0 0 4px; font-size: 13px; }
.chart-svg { display: block; width: 100%; height: auto; }
.chart-svg .grid { stroke: #eceff2; stroke-width: 1; }
.chart-svg .frame { fill: none; stroke: #9aa4ad; stroke-width: 1; }
.chart-svg .tick { fill: var(--muted); font-size: 11px; }
.chart-svg .axis-label { fill: var(--fg); font-size: 12px; }
.chart-svg .series { stroke-width: 2; fill: none; }
.chart-svg .pt-label { fill: var(--fg); font-size: 10.5px; }
.chart-svg .slo { stroke: var(--slo); stroke-width: 1.5; stroke-dasharray: 6 4; }
.chart-svg .slo-label { fill: var(--slo); font-size: 11px; font-weight: 600; }
.chart-svg .nstar { fill: none; stroke: #111; stroke-width: 2; }
.chart-svg .nstar-label { fill: #111; font-size: 11.5px; font-weight: 700; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 12px; margin: 2px 4px 4px; }
.legend .sw { display: inline-block; width: 12px; height: 3px; margin-right: 5px; vertical-align: middle; }
.legend .slo-sw { background: none; border-top: 2px dashed var(--slo); height: 0; }
.legend .nstar-sw { width: 10px; height: 10px; border: 2px solid #111; border-radius: 50%; }
.chart-error { color: var(--warn); font-weight: 600; }
@media print { main { max-width: none; } figure.chart { break-inside: avoid; } h2 { break-before: auto; } }
`;
