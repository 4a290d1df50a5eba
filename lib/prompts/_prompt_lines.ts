/**
 * Prompt-set text parsed line by line as it arrives, so a set is never held whole as bytes or text
 * next to its parsed prompts: only the parsed prompts and one partial line stay in memory.
 * @module
 */
import { dataError, type IkError } from "../cli/errors.ts";
import { parsePrompt, type Prompt } from "./prompt.ts";

/** Bucket selection applied while parsing. */
export interface LineSelection {
  /** Keep only these buckets. */
  buckets?: readonly string[];
  /** Keep only the first N prompts of each bucket (0 or absent = all). */
  limitPerBucket?: number;
}

/**
 * Accumulates prompts from text pushed in any pieces. The first bad line is remembered, not
 * thrown, and parsing stops there: the caller decides which error wins (a file that does not
 * match its manifest is reported as that, before its first bad line).
 */
export class PromptLines {
  /** The selected prompts so far, in file order. */
  readonly prompts: Prompt[] = [];
  /** The first bad line's error (data, 65, naming `file:line`), or null. */
  error: IkError | null = null;
  readonly #fileName: string;
  readonly #sel: LineSelection;
  readonly #ids = new Set<string>();
  readonly #perBucket = new Map<string, number>();
  // The current line's pieces: searching only each new piece for "\n" keeps a long line linear.
  #pieces: string[] = [];
  #lineNo = 0;

  /**
   * @param fileName the name used in errors (`prompts.jsonl:12: ...`)
   * @param sel bucket selection
   */
  constructor(fileName: string, sel: LineSelection = {}) {
    this.#fileName = fileName;
    this.#sel = sel;
  }

  /** Parses every line that `text` completes; keeps the rest for the next push. */
  push(text: string): void {
    if (this.error || text === "") return;
    let from = 0;
    for (;;) {
      const nl = text.indexOf("\n", from);
      if (nl === -1) break;
      const tail = text.slice(from, nl);
      const line = this.#pieces.length ? this.#pieces.join("") + tail : tail;
      this.#pieces = [];
      this.#line(line.endsWith("\r") ? line.slice(0, -1) : line);
      if (this.error) return;
      from = nl + 1;
    }
    if (from < text.length) this.#pieces.push(text.slice(from));
  }

  /** Parses the last line (one without a final newline). */
  end(): void {
    if (this.error) return;
    const last = this.#pieces.join("");
    this.#pieces = [];
    if (last !== "") this.#line(last);
  }

  #line(raw: string): void {
    this.#lineNo++;
    // A BOM is dropped by TextDecoder already; this keeps text handed in directly the same.
    const line = this.#lineNo === 1 && raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
    if (!line.trim()) return;
    const where = `${this.#fileName}:${this.#lineNo}`;
    let obj: unknown;
    try {
      obj = JSON.parse(line);
    } catch (e) {
      this.error = dataError(where, `not JSON (${(e as Error).message})`);
      return;
    }
    let p: Prompt;
    try {
      p = parsePrompt(obj, where);
    } catch (e) {
      this.error = e as IkError;
      return;
    }
    if (this.#ids.has(p.id)) {
      this.error = dataError(where, `duplicate id '${p.id}'`);
      return;
    }
    this.#ids.add(p.id);
    const { buckets, limitPerBucket } = this.#sel;
    if (buckets && buckets.length > 0 && !buckets.includes(p.bucket)) return;
    const k = this.#perBucket.get(p.bucket) ?? 0;
    if (limitPerBucket && k >= limitPerBucket) return;
    this.#perBucket.set(p.bucket, k + 1);
    this.prompts.push(p);
  }
}
