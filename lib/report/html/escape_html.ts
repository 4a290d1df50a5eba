/**
 * Text into HTML safely: record fields can hold anything (markup, script, terminal escapes,
 * bidi overrides). Text is made visible first (controls and bidi overrides as `\xNN`/`\uNNNN`,
 * as for a terminal), then HTML-escaped; JSON embedded in a `<script>` cannot close it.
 * @module
 */
import { escapeTerminal } from "../escape.ts";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Escapes text for an HTML element or a quoted attribute.
 * @example escapeHtml("<script>x</script>") // "&lt;script&gt;x&lt;/script&gt;"
 */
export function escapeHtml(text: string): string {
  return escapeTerminal(String(text)).replace(/[&<>"']/g, (c) => ENTITIES[c]);
}

/**
 * JSON for a `<script type="application/json">` element: `<`, `>`, `&` and the JavaScript line
 * separators escaped as `\uXXXX`, so no value can end the element or start a comment.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}
