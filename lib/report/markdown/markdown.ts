/**
 * The Markdown form of a report. Every piece of record text is escaped twice over: control
 * characters made visible (a terminal may show this), then Markdown's own markup characters
 * backslash-escaped, so a field cannot open a link, a tag, emphasis or a new table cell. A curve
 * becomes a table of its points (with the SLO and N*); a CDF is summed up by the percentile
 * table that follows it. Pure.
 * @module
 */
import { escapeTerminalLine } from "../escape.ts";
import { type Block, type ChartSpec, num, type ReportDoc } from "../document/doc.ts";

/**
 * Inline Markdown text: on one line, controls visible, markup characters escaped (`_` only where
 * it could start or end emphasis, so `ttft_ms` stays readable).
 * @example mdInline("<b>*x*</b>") // "\\<b\\>\\*x\\*\\</b\\>"
 */
export function mdInline(s: string): string {
  return escapeTerminalLine(s)
    .replace(/[\\`*[\]<>|~]/g, "\\$&")
    .replace(/_(?![A-Za-z0-9])|(?<![A-Za-z0-9])_/g, "\\_");
}

/** {@link mdInline}, and a line start that would open a heading or a list escaped too. */
export function mdText(s: string): string {
  return mdInline(s).replace(/^([#+=-])(?=\s|$)/, "\\$1").replace(/^(\d+)([.)])(?=\s|$)/, "$1\\$2");
}

function table(head: string[], rows: string[][]): string[] {
  const cells = (r: string[]) => `| ${r.map((c) => mdInline(c) || " ").join(" | ")} |`;
  return [cells(head), `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => cells(head.map((_, i) => r[i] ?? "")))];
}

function chartLines(c: ChartSpec): string[] {
  const lines = [`Chart: ${mdText(c.title)} (drawn in the HTML report: ik report --html FILE).`];
  if (c.kind !== "curve") return lines;
  const rows = c.series.flatMap((s) => s.points.map((p) => [s.name, p.label ?? "", num(p.x), num(p.y)]));
  lines.push("", ...table(["series", "point", c.x.label, c.y.label], rows));
  const extra = [...(c.hlines ?? []).map((h) => h.label), ...(c.marks ?? []).map((m) => `${m.label} at ${num(m.x)}, ${num(m.y)}`)];
  if (extra.length) lines.push("", mdText(extra.join("; ")));
  return lines;
}

function block(b: Block): string[] {
  switch (b.kind) {
    case "heading":
      return [`${"#".repeat(b.level)} ${mdText(b.text)}`];
    case "para":
      return [b.tone === "warn" ? `**Warning:** ${mdText(b.text)}` : b.tone === "note" ? `Note: ${mdText(b.text)}` : mdText(b.text)];
    case "facts":
      return b.items.map(([k, v]) => `- **${mdInline(k)}:** ${mdInline(v)}`);
    case "list":
      return b.items.map((i) => `- ${mdText(i)}`);
    case "table":
      return [...table(b.head, b.rows), ...(b.caption ? ["", mdText(b.caption)] : [])];
    case "chart":
      return chartLines(b.chart);
  }
}

/** Renders a report as Markdown (ends with one newline). */
export function renderMarkdown(doc: ReportDoc): string {
  const parts = [[`# ${mdText(doc.title)}`], ...doc.blocks.map(block)];
  return parts.map((p) => p.join("\n")).join("\n\n") + "\n";
}
