/**
 * The self-contained HTML report: page, inline style, the chart-drawing script, escaping.
 * @module
 */
export { CHART_SCRIPT } from "./chart_script.ts";
export { escapeHtml, jsonForScript } from "./escape_html.ts";
export { PAGE_CSS, SERIES_COLORS } from "./page_style.ts";
export { chartData, PAGE_CSP, renderHtml } from "./render_html.ts";
