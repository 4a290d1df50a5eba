/**
 * A small reader for the Python literals engines print in their startup logs (vLLM's
 * `non-default args: {...}`, SGLang's `server_args=ServerArgs(...)`, `key=value, ...` lists),
 * turned into JSON values. It only reads text: nothing is ever evaluated or executed.
 *
 * - dicts → objects (keys as strings), lists, tuples and sets → arrays, `(x)` → x;
 * - strings in either quote, triple quotes, r/b/u/f prefixes, escapes, adjacent concatenation;
 * - ints (also hex, octal, binary, `_`), floats → numbers; an int beyond 2^53 or a complex
 *   literal stays a string;
 * - True/False/None (and JSON's true/false/null) → true/false/null;
 * - a call `Name(a=1, ...)` → an object of its keyword arguments (positional ones under `_args`);
 *   a call with only positional arguments → its one argument, or an array of them; `Name()` → {};
 * - a bare (dotted) name such as `auto` or `torch.bfloat16` → that string; `<Enum.X: 1>` → its text.
 *
 * Garbage never throws: each function answers `ok: false` (or what it could read).
 * @module
 */

/** A JSON value. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Literals longer than this are not read (ok: false). */
export const MAX_LITERAL_CHARS = 256 * 1024;

/** Containers and calls nested deeper than this are refused (ok: false). */
export const MAX_LITERAL_DEPTH = 64;

/** The result of reading one literal. */
export interface PyLiteral {
  /** Whether a literal was read. */
  ok: boolean;
  /** The value read (null when not ok). */
  value: JsonValue;
  /** The index just after the literal in the text. */
  end: number;
}

class Fail extends Error {}

const NAME = /[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*/y;
const NUMBER =
  /[+-]?(?:0[xX][0-9a-fA-F_]+|0[oO][0-7_]+|0[bB][01_]+|(?:\d[\d_]*(?:\.[\d_]*)?|\.\d[\d_]*)(?:[eE][+-]?\d[\d_]*)?)[jJ]?/y;
/** Python's and JSON's constant names and their JSON values. */
export const CONSTANTS: Record<string, JsonValue> = {
  True: true,
  False: false,
  None: null,
  true: true,
  false: false,
  null: null,
};
const SIMPLE_ESCAPES: Record<string, string> = {
  "\\": "\\",
  "'": "'",
  '"': '"',
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
};

/** Sets a key without ever touching the prototype (`__proto__` is an ordinary key here). */
export function setOwn(o: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
}

class Reader {
  i: number;
  depth = 0;
  constructor(readonly s: string, start: number) {
    this.i = start;
  }
  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i])) this.i++;
  }
  peek(): string {
    return this.s[this.i] ?? "";
  }
  sticky(re: RegExp): string | null {
    re.lastIndex = this.i;
    const m = re.exec(this.s);
    if (!m) return null;
    this.i += m[0].length;
    return m[0];
  }
  enter(): void {
    if (++this.depth > MAX_LITERAL_DEPTH) throw new Fail("too deep");
  }

  value(): JsonValue {
    this.ws();
    const c = this.peek();
    if (c === "{") return this.braces();
    if (c === "[") return this.seq("[", "]");
    if (c === "(") return this.paren();
    if (c === "<") return this.angle();
    if (c === "'" || c === '"' || /^[rRbBuUfF]{1,2}['"]/.test(this.s.slice(this.i, this.i + 3))) return this.strings();
    if (this.s.startsWith("...", this.i)) return (this.i += 3), "...";
    if (/[0-9.+-]/.test(c)) {
      const n = this.sticky(NUMBER);
      if (n !== null) return pyNumber(n);
      if (c === "-" || c === "+") {
        this.i++;
        const name = this.sticky(NAME);
        if (name === "inf" || name === "nan") return c + name;
      }
      throw new Fail("bad number");
    }
    const name = this.sticky(NAME);
    if (name === null) throw new Fail("unexpected character");
    if (this.peek() === "(") return this.call();
    return name in CONSTANTS ? CONSTANTS[name] : name;
  }

  /** Reads `items` separated by commas (a trailing one allowed) up to `close`. */
  items(close: string, one: () => void): boolean {
    let comma = false;
    for (;;) {
      this.ws();
      if (this.peek() === close) return this.i++, comma;
      if (this.i >= this.s.length) throw new Fail("unterminated");
      one();
      this.ws();
      if (this.peek() === ",") this.i++, comma = true;
      else if (this.peek() !== close) throw new Fail(`expected , or ${close}`);
    }
  }

  seq(open: string, close: string): JsonValue[] {
    this.enter();
    this.i += open.length;
    const out: JsonValue[] = [];
    this.items(close, () => out.push(this.value()));
    this.depth--;
    return out;
  }

  paren(): JsonValue {
    this.enter();
    this.i++;
    const out: JsonValue[] = [];
    const comma = this.items(")", () => out.push(this.value()));
    this.depth--;
    return out.length === 1 && !comma ? out[0] : out;
  }

  braces(): JsonValue {
    this.enter();
    this.i++;
    const dict: Record<string, JsonValue> = {};
    const set: JsonValue[] = [];
    let mode: "dict" | "set" | null = null;
    this.items("}", () => {
      const k = this.value();
      this.ws();
      const isDict = this.peek() === ":";
      if (mode !== null && (mode === "dict") !== isDict) throw new Fail("mixed dict and set");
      mode = isDict ? "dict" : "set";
      if (!isDict) return void set.push(k);
      this.i++;
      setOwn(dict, typeof k === "string" ? k : JSON.stringify(k), this.value());
    });
    this.depth--;
    return mode === "set" ? set : dict;
  }

  call(): JsonValue {
    this.enter();
    this.i++;
    const kwargs: Record<string, JsonValue> = {};
    const args: JsonValue[] = [];
    let named = false;
    this.items(")", () => {
      const at = this.i;
      const key = this.sticky(/[A-Za-z_][A-Za-z0-9_]*\s*=(?!=)/y);
      if (key === null) return void (this.i = at, args.push(this.value()));
      named = true;
      setOwn(kwargs, key.replace(/\s*=$/, ""), this.value());
    });
    this.depth--;
    if (!named) return args.length === 0 ? {} : args.length === 1 ? args[0] : args;
    if (args.length > 0) setOwn(kwargs, "_args", args);
    return kwargs;
  }

  angle(): string {
    let depth = 0;
    const start = this.i;
    for (; this.i < this.s.length; this.i++) {
      const c = this.s[this.i];
      if (c === "<") depth++;
      else if (c === ">" && --depth === 0) return this.s.slice(start, ++this.i);
      else if (c === "\n") break;
    }
    throw new Fail("unterminated <...>");
  }

  strings(): string {
    let out = this.string();
    for (;;) {
      const at = this.i;
      this.ws();
      const c = this.peek();
      if (c === "'" || c === '"' || /^[rRbBuUfF]{1,2}['"]/.test(this.s.slice(this.i, this.i + 3))) {
        out += this.string();
      } else return (this.i = at), out;
    }
  }

  string(): string {
    const prefix = this.sticky(/[rRbBuUfF]{0,2}/y) ?? "";
    const raw = /r/i.test(prefix);
    const q = this.peek();
    const quote = this.s.startsWith(q.repeat(3), this.i) ? q.repeat(3) : q;
    this.i += quote.length;
    let out = "";
    while (this.i < this.s.length) {
      if (this.s.startsWith(quote, this.i)) return (this.i += quote.length), out;
      const c = this.s[this.i++];
      if (c === "\n" && quote.length === 1) break;
      if (c !== "\\") {
        out += c;
        continue;
      }
      const e = this.s[this.i++] ?? "";
      if (raw) out += "\\" + e;
      else out += this.escape(e);
    }
    throw new Fail("unterminated string");
  }

  escape(e: string): string {
    if (e in SIMPLE_ESCAPES) return SIMPLE_ESCAPES[e];
    if (e === "\n") return "";
    const hex = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (hex > 0) {
      const h = this.s.slice(this.i, this.i + hex);
      const code = /^[0-9a-fA-F]+$/.test(h) && h.length === hex ? parseInt(h, 16) : -1;
      if (code < 0 || code > 0x10ffff) return "\\" + e;
      this.i += hex;
      return String.fromCodePoint(code);
    }
    if (/[0-7]/.test(e)) {
      let oct = e;
      while (oct.length < 3 && /[0-7]/.test(this.peek())) oct += this.s[this.i++];
      return String.fromCodePoint(parseInt(oct, 8));
    }
    return "\\" + e;
  }
}

/** A Python number literal's text as a JSON number (a string when JSON cannot hold it exactly). */
export function pyNumber(text: string): JsonValue {
  const t = text.replace(/_/g, "");
  if (/[jJ]$/.test(t)) return text;
  const sign = t.startsWith("-") ? -1 : 1;
  const body = t.replace(/^[+-]/, "");
  const base = /^0[xX]/.test(body) ? 16 : /^0[oO]/.test(body) ? 8 : /^0[bB]/.test(body) ? 2 : 10;
  const n = base === 10 ? Number(body) : parseInt(body.slice(2), base);
  if (!Number.isFinite(n)) return text;
  if (Number.isInteger(n) && !/[.eE]/.test(body) && !Number.isSafeInteger(n)) return text;
  return sign * n;
}

/**
 * Reads one Python literal starting at `start` (leading white space skipped).
 * Never throws; `ok: false` when there is none or it is malformed, too long or too deep.
 */
export function parsePyLiteral(text: string, start = 0): PyLiteral {
  if (typeof text !== "string" || text.length - start > MAX_LITERAL_CHARS) {
    return { ok: false, value: null, end: start };
  }
  const r = new Reader(text, start);
  try {
    const value = r.value();
    return { ok: true, value, end: r.i };
  } catch (e) {
    if (e instanceof Fail || e instanceof RangeError) return { ok: false, value: null, end: start };
    throw e;
  }
}

/** Reads `text` as exactly one Python literal (surrounding white space allowed); ok: false otherwise. */
export function parsePyValue(text: string): PyLiteral {
  const r = parsePyLiteral(text);
  if (!r.ok || text.slice(r.end).trim() !== "") return { ok: false, value: null, end: 0 };
  return r;
}
