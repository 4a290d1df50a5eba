/**
 * A rounds cell's own progress, forwarded from its `bench serve` child's stderr: on a terminal one
 * line that updates in place (and is cleared before the next regular line); piped, the child's
 * progress lines as they come, prefixed with the cell. Only the child's progress and warnings
 * (`bench serve: …`, `load …`) are forwarded; its errors stay in the cell's log and record.
 * @module
 */
import { escapeTerminalLine } from "../escape.ts";

/** Whether a child's stderr line is progress worth forwarding. */
export function isProgressLine(line: string): boolean {
  return /^(bench serve: |load [^\s]+: )/.test(line);
}

/**
 * The forwarder: `show(cell, line)` for a child's line, `end(text)` to write a regular line (the
 * updating line is cleared first on a terminal).
 */
export function cellProgressLine(write: (text: string) => void, tty: boolean): { show(cell: string, line: string): void; end(text: string): void } {
  let open = false;
  return {
    show(cell, line) {
      if (!isProgressLine(line)) return;
      const text = `  ${escapeTerminalLine(cell)}: ${escapeTerminalLine(line.replace(/^bench serve: /, ""))}`;
      if (tty) {
        write(`\r\x1b[K${text.slice(0, 200)}`);
        open = true;
      } else write(`${text}\n`);
    },
    end(text) {
      if (open) {
        write("\r\x1b[K");
        open = false;
      }
      if (text) write(text);
    },
  };
}
