/**
 * Server text printed for a person: terminal escape sequences and control characters are made
 * visible, so a hostile or broken server cannot move the cursor, recolour or retitle the
 * terminal, or hide part of a line. JSON output never goes through this: it stays exact.
 * @module
 */

// C0 controls except tab and newline, DEL, C1 controls, and the bidi overrides/isolates that
// can reorder what is shown.
// deno-lint-ignore no-control-regex
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

function visible(ch: string): string {
  const c = ch.charCodeAt(0);
  if (c === 0x1b) return "\\e";
  if (c === 0x0d) return "\\r";
  return c <= 0xff ? `\\x${c.toString(16).padStart(2, "0")}` : `\\u${c.toString(16).padStart(4, "0")}`;
}

/**
 * Escapes control characters (ESC becomes `\e`, CR `\r`, others `\xNN` / `\uNNNN`); tab and
 * newline stay, everything printable stays as it is.
 * @example escapeTerminal("\u001b[31mred") // "\\e[31mred"
 */
export function escapeTerminal(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** Like {@link escapeTerminal}, and newlines and tabs too: for text that must stay on one line. */
export function escapeTerminalLine(text: string): string {
  return escapeTerminal(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
