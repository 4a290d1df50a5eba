/**
 * A streaming reader of one top-level JSON array (the ShareGPT_V3 file is ~650 MB of one array):
 * text is pushed in any pieces, each element is cut out at its closing bracket and parsed on its
 * own, so only one element's text is held at a time. Errors name `file:line` (the line where the
 * element starts, or the exact line where the runtime's parser says it failed).
 * @module
 */
import { dataError } from "../cli/errors.ts";

type State = "start" | "before" | "elem" | "after" | "done";

/** Cuts a JSON array into its elements as text arrives. */
export class JsonArrayReader {
  readonly #name: string;
  readonly #onElement: (value: unknown, line: number, index: number) => void;
  #state: State = "start";
  #line = 1;
  #depth = 0;
  #inStr = false;
  #esc = false;
  #afterComma = false;
  #pieces: string[] = [];
  #elemLine = 0;
  #index = 0;

  /**
   * @param name the file name used in errors
   * @param onElement called with each parsed element, the line it starts on and its 0-based index
   */
  constructor(name: string, onElement: (value: unknown, line: number, index: number) => void) {
    this.#name = name;
    this.#onElement = onElement;
  }

  #err(line: number, what: string): Error {
    return dataError(`${this.#name}:${line}`, what);
  }

  #finish(text: string): void {
    const line = this.#elemLine;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      const msg = (e as Error).message;
      const pos = /position (\d+)/.exec(msg);
      const at = pos ? line + (text.slice(0, Number(pos[1])).match(/\n/g)?.length ?? 0) : line;
      throw this.#err(at, `not JSON (${msg.replace(/\s+/g, " ").slice(0, 120)})`);
    }
    this.#onElement(value, line, this.#index++);
    this.#state = "after";
  }

  /** Scans a piece of text; elements it completes are passed to the callback. */
  push(text: string): void {
    let start = this.#state === "elem" ? 0 : -1;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (this.#state === "elem") {
        if (c === 10) this.#line++;
        if (this.#inStr) {
          if (this.#esc) this.#esc = false;
          else if (c === 92) this.#esc = true;
          else if (c === 34) this.#inStr = false;
          continue;
        }
        if (c === 34) this.#inStr = true;
        else if (c === 123 || c === 91) this.#depth++;
        else if (c === 125 || c === 93) {
          if (this.#depth === 0) {
            // The array's own ']' right after a bare value: end the value, rescan the bracket.
            this.#finish(this.#take(text, start, i));
            i--;
          } else if (--this.#depth === 0) this.#finish(this.#take(text, start, i + 1));
        } else if (c === 44 && this.#depth === 0) {
          this.#finish(this.#take(text, start, i));
          i--;
        }
        continue;
      }
      if (c === 10) {
        this.#line++;
        continue;
      }
      if (c === 32 || c === 9 || c === 13 || (c === 0xfeff && this.#state === "start")) continue;
      if (this.#state === "start") {
        if (c !== 91) throw this.#err(this.#line, "not a JSON array (the file must start with '[')");
        this.#state = "before";
      } else if (this.#state === "before") {
        if (c === 93) {
          if (this.#afterComma) throw this.#err(this.#line, "a ',' before the closing ']'");
          this.#state = "done";
          continue;
        }
        this.#state = "elem";
        this.#elemLine = this.#line;
        this.#depth = 0;
        start = i;
        i--;
      } else if (this.#state === "after") {
        if (c === 44) {
          this.#state = "before";
          this.#afterComma = true;
        } else if (c === 93) this.#state = "done";
        else throw this.#err(this.#line, `expected ',' or ']' after an element, found '${String.fromCharCode(c)}'`);
      } else throw this.#err(this.#line, "text after the array's closing ']'");
    }
    if (this.#state === "elem" && start >= 0) this.#pieces.push(text.slice(start));
  }

  #take(text: string, start: number, end: number): string {
    const piece = text.slice(Math.max(0, start), end);
    const all = this.#pieces.length ? this.#pieces.join("") + piece : piece;
    this.#pieces = [];
    return all;
  }

  /** Checks that the array was closed. */
  end(): void {
    if (this.#state === "done") return;
    if (this.#state === "start") throw this.#err(this.#line, "empty file: not a JSON array");
    throw this.#err(this.#elemLine || this.#line, this.#inStr ? "the file ends inside a string (truncated?)" : "the file ends inside the array (truncated?)");
  }
}
