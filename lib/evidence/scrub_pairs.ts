/**
 * The name rules of ./scrub.ts for `name → value` pairs written as text: what engines, proxies and
 * shells print (CONTRACTS.md "Redaction"). Each rule is keyed by `isSecretKey`, so workload names
 * (`max_tokens`, `tokens`, `token_ids`) are never touched:
 *
 * - a JSON or Python pair whose value is an object or an array: `"auth": {"pw": "S"}`,
 *   vLLM's `'api_key': ['X']` (the whole value becomes one `"***"` string: JSON and Python
 *   literals stay parseable);
 * - `name=value`, `name='value'`, `name="value"` (SGLang's `ServerArgs(api_key='X')`, logfmt, a
 *   shell environment, a Prometheus label) and `name: value` (HTTP headers, YAML, log lines);
 *   `Authorization: Basic X` keeps its scheme, `Cookie: …` loses the rest of the line;
 * - `Basic X` credentials anywhere.
 *
 * Kept as they are: numbers (`first_token: 0.3`), `None`/`null`/`true`/`false`/`lambda`,
 * placeholders (`...`, `<key>`, `$VAR`, `KEY=VALUE`), and prose: after a word (not a log level), a
 * one-word name (`token`, `key`) counts only when the value looks like a credential (letters and
 * digits, or long and not a lower-case name): "time to first token: 0.3 s", "the key: see docs",
 * "EOS token: usage.completion_tokens" and "a key=value list" stay; "INFO password: hunter" does not.
 * @module
 */
import { isSecretKey, REDACTED } from "./redact.ts";

/** Longest object or array value scanned for its closing bracket (characters). */
export const MAX_BRACKET_SCAN = 16 * 1024;

/**
 * A word every secret-looking name holds (`isSecretKey`: key, token, secret, password, passwd,
 * auth, authorization, cookie): text without one is skipped whole (most log lines, most strings).
 */
const SECRET_HINT = /key|token|secret|passw|auth|cookie/i;

const keyCache = new Map<string, boolean>();
/** isSecretKey, remembered (text is scanned for many pairs with the same few names). */
function secretName(name: string): boolean {
  let r = keyCache.get(name);
  if (r === undefined) {
    r = isSecretKey(name);
    if (keyCache.size < 10_000) keyCache.set(name, r);
  }
  return r;
}

/**
 * Names that always hold a credential (their value goes whatever it looks like). Other names
 * `isSecretKey` matches, by their last segment alone (`pad_token`, `next_token`, `cache key`,
 * `primary key`), hold one only when the value reads like a credential, and never an object or
 * an array (a tokenizer's `"pad_token": {"content": "<pad>"}`, llama.cpp's `"next_token": [{…}]`).
 */
const CREDENTIAL_NAME = /(^|[-_])(api[-_]?key|access[-_]key|secret[-_]key|private[-_]key|password|passwd|pwd|secret|authorization|auth|cookie|(access|refresh|auth|session|bearer|id|hf|api)[-_]token)$|^(token|key)$/i;

/** Whether `name` always holds a credential (see {@link CREDENTIAL_NAME}); camelCase is read as snake_case. */
function credentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name.replace(/([a-z0-9])([A-Z])/g, "$1_$2"));
}

/**
 * Where the object or array that opens at `open` ends (the index after its closing bracket),
 * or -1 when it does not close within {@link MAX_BRACKET_SCAN} characters or before a line break
 * outside a string. Quoted strings (`"`, `'`) are skipped; a backslash escapes the next character.
 */
export function closingBracket(text: string, open: number): number {
  let depth = 0;
  let quote = "";
  const end = Math.min(text.length, open + MAX_BRACKET_SCAN);
  for (let i = open; i < end; i++) {
    const c = text[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (quote) {
      if (c === quote) quote = "";
      else if (c === "\n") return -1;
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "[" || c === "{" || c === "(") depth++;
    else if (c === "]" || c === "}" || c === ")") {
      if (--depth === 0) return i + 1;
    } else if (c === "\n") return -1;
  }
  return -1;
}

/** An object or array of numbers only (`[0.1, 0.5, 1]`): data, not a credential. */
const NUMBERS_ONLY = /^[[({][\s\d.,eE+\-[\]{}()]*[\])}]$/;

/** Where an unclosed value's redaction stops: the end of its line, at most {@link MAX_BRACKET_SCAN} on. */
function lineEnd(text: string, from: number): number {
  const nl = text.indexOf("\n", from);
  return Math.min(nl < 0 ? text.length : nl, from + MAX_BRACKET_SCAN);
}

/** A quoted name (`"auth"`, `'api_key'`, `\"token\"`), its separator, then `{` or `[`. */
const QUOTED_NAME_THEN_BRACKET = /(\\?["'])([A-Za-z_][A-Za-z0-9_.-]*)\1(\s*:\s*)(?=[[{])/g;

/**
 * `"name": {…}` and `'name': […]` with a secret-looking name: the whole value becomes `"***"` (in
 * the name's own quotes). A value that does not close (cut text) is redacted to its line's end.
 */
export function redactBracketPairs(text: string): string {
  if ((!text.includes("[") && !text.includes("{")) || !SECRET_HINT.test(text)) return text;
  let out = "";
  let last = 0;
  QUOTED_NAME_THEN_BRACKET.lastIndex = 0;
  for (let m = QUOTED_NAME_THEN_BRACKET.exec(text); m !== null; m = QUOTED_NAME_THEN_BRACKET.exec(text)) {
    const [all, q, name] = m;
    if (!secretName(name) || !credentialName(name)) continue;
    const open = m.index + all.length;
    const close = closingBracket(text, open);
    if (close > 0 && NUMBERS_ONLY.test(text.slice(open, close))) continue;
    const stop = close > 0 ? close : lineEnd(text, open);
    out += text.slice(last, open) + q + REDACTED + q;
    last = stop;
    QUOTED_NAME_THEN_BRACKET.lastIndex = stop;
  }
  return last === 0 ? text : out + text.slice(last);
}

/**
 * `name` then `=` or `:`, then a quoted value (`'x'`, `"x"`, `\"x\"`), an auth scheme and its
 * credential, or an unquoted value. Groups: 1 the character before, 2 name, 3 separator, 4 quote,
 * 5 quoted value, 6 scheme, 7 unquoted value (or its first character `[`/`{`/`(`).
 */
const NAMED_VALUE =
  /(^|[\s{(\[,;|'"`])([A-Za-z_][A-Za-z0-9_.-]*)(=|:[ \t]*)(?:(\\?["'])((?:(?!\4)[^\\\n]|\\[^\n])*?)\4|((?:Basic|Bearer|Digest|Token|Negotiate|NTLM|ApiKey)[ \t]+)?([^\s,;'"`)\]}&<>\\]+))/gim;

/** Values that are no secret: literals (Python's `key=lambda …` too), numbers, placeholders (`KEY=VALUE`), what is already redacted. */
const NOT_A_SECRET = /^(?:None|null|nil|true|false|True|False|undefined|lambda|value|VALUE|[-+]?\d[\d.,_]*(?:[eE][-+]?\d+)?%?|\.{2,}|…|<[^>]*>|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?|\*+)$/;

/** A value that reads like a credential rather than a word: letters and digits, or long and not a lower-case name (`usage.completion_tokens`). */
function credentialLike(v: string): boolean {
  return (/[A-Za-z]/.test(v) && /[0-9]/.test(v)) || (v.length >= 16 && !/^[a-z_.]+$/.test(v));
}

/** A log line's level: the word before a field, not prose. */
const LOG_LEVEL = /^(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL)$/;

/** Whether the name at `at` follows a word of prose ("first token:", "EOS token:", "the key="): letters then blanks, not a log level. */
function afterProseWord(text: string, at: number): boolean {
  let i = at - 1;
  while (i >= 0 && (text[i] === " " || text[i] === "\t")) i--;
  const end = i + 1;
  if (end === at || i < 0) return false;
  while (i >= 0 && /[A-Za-z]/.test(text[i])) i--;
  const word = text.slice(i + 1, end);
  return word !== "" && (i < 0 || /\s/.test(text[i])) && !LOG_LEVEL.test(word);
}

/** Names whose value runs to the end of the line (`Cookie: a=b; c=d`). */
function wholeLineName(name: string): boolean {
  return /(^|[-_])(set[-_])?cookie$/i.test(name) || /authorization$/i.test(name);
}

/** The end of a header's value: the line's end, or a quote or backslash (text inside a JSON string). */
const REST_OF_LINE = /[^\r\n"'`\\]*/y;

/**
 * `name=value`, `name='value'`, `name: value` with a secret-looking name: the value becomes `***`
 * (quotes and an auth scheme kept; an object or array value as a whole). See the module doc for
 * what is kept.
 */
export function redactNamedValues(text: string): string {
  if ((!text.includes("=") && !text.includes(":")) || !SECRET_HINT.test(text)) return text;
  let out = "";
  let last = 0;
  NAMED_VALUE.lastIndex = 0;
  for (let m = NAMED_VALUE.exec(text); m !== null; m = NAMED_VALUE.exec(text)) {
    const [all, pre, name, sep, quote, quoted, scheme, bare] = m;
    if (!secretName(name)) continue;
    const strong = credentialName(name);
    const nameAt = m.index + pre.length;
    const valueAt = nameAt + name.length + sep.length;
    const colon = sep[0] === ":";
    let value = quoted ?? bare;
    let valueEnd = m.index + all.length;
    if (quote !== undefined) {
      if (value === "" || NOT_A_SECRET.test(value) || (!strong && !credentialLike(value))) continue;
      out += text.slice(last, valueAt) + quote + REDACTED + quote;
    } else {
      const head = scheme ?? "";
      const start = valueAt + head.length;
      if (/^[[({]/.test(bare)) {
        if (!strong) continue;
        const close = closingBracket(text, start);
        if (close > 0 && NUMBERS_ONLY.test(text.slice(start, close))) continue;
        valueEnd = close > 0 ? close : lineEnd(text, start);
        value = text.slice(start, valueEnd);
      } else if (colon && wholeLineName(name)) {
        REST_OF_LINE.lastIndex = start;
        valueEnd = start + (REST_OF_LINE.exec(text)?.[0].trimEnd().length ?? 0);
        value = text.slice(start, valueEnd);
      } else {
        const tail = value.match(/[.:!?]+$/)?.[0] ?? "";
        value = value.slice(0, value.length - tail.length);
        valueEnd -= tail.length;
      }
      if (value === "" || NOT_A_SECRET.test(value)) continue;
      // "time to first token: 0.3 s", "the key: see docs", "a key=value list": prose, not a field.
      if (!/[-_.]|[a-z][A-Z]/.test(name) && !wholeLineName(name) && afterProseWord(text, nameAt) && !credentialLike(value)) continue;
      if (!strong && !credentialLike(value)) continue;
      out += text.slice(last, start) + REDACTED;
    }
    last = valueEnd;
    NAMED_VALUE.lastIndex = valueEnd;
  }
  return last === 0 ? text : out + text.slice(last);
}

/** A Basic credential (`Authorization: Basic dXNlcjpwYXNz`). */
const BASIC = /\b(Basic)[ \t]+([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/g;

/** `Basic X` with X a credential (prose such as "Basic usage" stays: a credential has a digit, `+`, `/`, `=` or is long). */
export function redactBasic(text: string): string {
  if (!text.includes("Basic")) return text;
  return text.replace(BASIC, (all, scheme: string, cred: string) =>
    /^[A-Za-z]{1,15}$/.test(cred) ? all : `${scheme} ${REDACTED}`);
}
