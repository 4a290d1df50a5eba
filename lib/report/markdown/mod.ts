/**
 * A report document (lib/report/document/) rendered as Markdown.
 * @module
 */
export { mdInline, mdText, renderMarkdown } from "./markdown.ts";
