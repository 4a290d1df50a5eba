/**
 * The one scrubber every byte ik writes or prints goes through (CONTRACTS.md "Redaction").
 *
 * It knows this run's secret values (the API key, manifest `env` values whose names look secret),
 * registered once where they are read, and removes them wherever they turn up; on top it applies
 * the name rules of ./redact.ts: URL userinfo, secret query and fragment values, the whole-segment
 * key rule on JSON keys and on argv flags (`--api-key X`, `--hf-token=X`), and `Bearer X`.
 *
 * - {@link scrubText}: a message, an error line, a captured log, a report page.
 * - {@link scrubValue}: a JSON document before it is stringified (records, rounds cells, manifests).
 * - {@link scrubJsonLine}: one JSONL row (cheap: keys and known values only).
 * - {@link scrubArgv}: a command line as ik stores or prints it (never the argv a child runs with).
 * @module
 */
import { isSecretKey, REDACTED, redactUrlsInText } from "./redact.ts";
import { redactBasic, redactBracketPairs, redactNamedValues } from "./scrub_pairs.ts";

/** Values shorter than this are never scrubbed as text: they would mangle ordinary output. */
export const MIN_SECRET_LENGTH = 4;

/** All-digit secrets shorter than this are not scrubbed as text: they would erase ordinary numbers. */
export const MIN_NUMERIC_SECRET_LENGTH = 6;

const known = new Set<string>();
/** Longest first, so a secret that contains another is replaced whole. */
let ordered: string[] = [];
/** All-digit secrets (a numeric API key), longest first: replaced only where no number is cut. */
let numeric: string[] = [];

/**
 * Values never replaced as text: a JSON literal or a non-integer number would be replaced inside
 * the numbers and literals of every JSON file ik writes, breaking them (such a value is still
 * redacted by its key or flag name). All-digit values are kept apart (see {@link scrubKnown}).
 */
const NOT_TEXT_SCRUBBABLE = /^\s*(true|false|null|[-+]?[0-9][0-9.eE+-]*)\s*$/;

/**
 * Registers a secret value of this run (an API key, a secret-named env value): from now on it is
 * replaced by `***` in everything ik writes or prints. Its URL-encoded and JSON-escaped forms are
 * registered too. Empty and too-short values and JSON literals are ignored; an all-digit value of
 * at least {@link MIN_NUMERIC_SECRET_LENGTH} digits is replaced only where it is not part of a
 * longer number nor a JSON number of its own (a count is never rewritten).
 */
export function registerSecret(value: string | null | undefined): void {
  if (!value || value.length < MIN_SECRET_LENGTH) return;
  if (/^[0-9]+$/.test(value)) {
    if (value.length >= MIN_NUMERIC_SECRET_LENGTH && !numeric.includes(value)) numeric = [...numeric, value].sort((a, b) => b.length - a.length);
    return;
  }
  if (NOT_TEXT_SCRUBBABLE.test(value)) return;
  const forms = [value, encodeURIComponent(value), JSON.stringify(value).slice(1, -1)];
  let added = false;
  for (const f of forms) {
    if (f.length >= MIN_SECRET_LENGTH && !known.has(f)) {
      known.add(f);
      added = true;
    }
  }
  if (added) ordered = [...known].sort((a, b) => b.length - a.length);
}

/**
 * Registers the values of an environment whose NAMES look secret (`HF_TOKEN`, `OPENAI_API_KEY`,
 * `DB_PASSWORD`): an engine that prints its environment must not put them in ik's logs.
 */
export function registerSecretEnv(env: Readonly<Record<string, string | undefined>> | undefined): void {
  for (const [name, value] of Object.entries(env ?? {})) if (isSecretKey(name)) registerSecret(value);
}

/**
 * Registers the secrets ik's own command line names: the value of the env var that
 * `--api-key-env NAME` points at, the value given to any secret-looking flag
 * (`--api-key=sk-…`, `--token X`) and secret-looking keys' values in a JSON argument
 * (`--extra-body '{"api_key": …}'`), so that a usage error, a crash log or a server echo never
 * shows them.
 * @param env looks an environment variable up (the runtime's `env`)
 */
export function registerArgvSecrets(argv: readonly string[], env: (name: string) => string | undefined): void {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const eq = a.indexOf("=");
    const flag = eq > 0 ? a.slice(0, eq) : a;
    const value = eq > 0 ? a.slice(eq + 1) : argv[i + 1];
    if (!a.startsWith("-") || value === undefined || (eq < 0 && value.startsWith("-"))) continue;
    if (flag === "--api-key-env") registerSecret(env(value));
    else if (isSecretFlag(flag)) registerSecret(value);
    else if (/^\s*\{/.test(value)) registerJsonSecrets(value);
  }
}

/**
 * Registers the values of secret-looking keys in a JSON argument (`--extra-body '{"api_key": …}'`):
 * a server that echoes the request body must not put them in a stored output. Not JSON: nothing.
 */
export function registerJsonSecrets(text: string): void {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return;
  }
  // Under a secret key every leaf is a secret: `{"api_key": ["X"]}`, `{"auth": {"value": "Y"}}`.
  const visit = (x: unknown, depth: number, secret: boolean): void => {
    if (depth > 32) return;
    if (secret && typeof x === "string") registerSecret(x);
    else if (secret && typeof x === "number" && Number.isSafeInteger(x) && x >= 0) registerSecret(String(x));
    if (x === null || typeof x !== "object") return;
    for (const [k, y] of Object.entries(x as Record<string, unknown>)) visit(y, depth + 1, secret || isSecretKey(k));
  };
  visit(v, 0, false);
}

/** The secret values registered so far (longest first). */
export function knownSecrets(): readonly string[] {
  return numeric.length === 0 ? ordered : [...ordered, ...numeric].sort((a, b) => b.length - a.length);
}

/** Forgets every registered secret (tests only: a run registers its secrets once). */
export function clearSecrets(): void {
  known.clear();
  ordered = [];
  numeric = [];
}

/**
 * Replaces every registered secret value in `text` by `***`. An all-digit secret is replaced
 * where it stands apart from other digits and is not a JSON number of its own (`"n": 98765432`,
 * `[98765432]`, a CSV field): inside a string (`"key 98765432"`) or a message it goes.
 */
export function scrubKnown(text: string): string {
  if (!text || (ordered.length === 0 && numeric.length === 0)) return text;
  let out = text;
  for (const s of ordered) if (out.includes(s)) out = out.split(s).join(REDACTED);
  for (const s of numeric) if (out.includes(s)) out = scrubDigits(out, s);
  return out;
}

/** `text` with the all-digit secret `s` replaced where {@link scrubKnown} says. */
function scrubDigits(text: string, s: string): string {
  let out = "";
  let from = 0;
  for (let i = text.indexOf(s); i >= 0; i = text.indexOf(s, from)) {
    const end = i + s.length;
    out += text.slice(from, i) + (partOfNumber(text, i, end) ? s : REDACTED);
    from = end;
  }
  return out + text.slice(from);
}

const DIGIT = /[0-9]/;
/** Whether `text[start, end)` (digits) belongs to a longer number or is a JSON number token of its own. */
function partOfNumber(text: string, start: number, end: number): boolean {
  const before = text[start - 1] ?? "", after = text[end] ?? "";
  if (DIGIT.test(before) || DIGIT.test(after)) return true;
  if ((before === "." && DIGIT.test(text[start - 2] ?? "")) || (after === "." && DIGIT.test(text[end + 1] ?? ""))) return true;
  if (/[eE]/.test(after) && /[-+0-9]/.test(text[end + 1] ?? "")) return true;
  // A JSON value of its own: after `:`, `[`, `,` (or the start), before `,`, `]`, `}` (or the end).
  let b = start - (before === "-" ? 2 : 1);
  while (b >= 0 && /\s/.test(text[b])) b--;
  let a = end;
  while (a < text.length && /\s/.test(text[a])) a++;
  return (b < 0 || /[:[,]/.test(text[b])) && (a >= text.length || /[,\]}]/.test(text[a]));
}

/** `--name=value` with a secret-looking name. */
const FLAG_EQ_IN_TEXT = /(^|[\s'"`(\[,])(--?[A-Za-z][A-Za-z0-9_.-]*)=([^\s'"`)\],]+)/g;
/** `--name value` with a secret-looking name (the value not itself a flag). */
const FLAG_SP_IN_TEXT = /(^|[\s'"`(\[,])(--?[A-Za-z][A-Za-z0-9_.-]*)(\s+['"`]?)([^\s'"`)\],-][^\s'"`)\],]{3,})/g;
/** A JSON (or Python repr) `"name": "value"` pair in text, also inside an escaped JSON string. */
const JSON_PAIR_IN_TEXT = /(\\?["'])([A-Za-z][A-Za-z0-9_.-]*)\1(\s*:\s*)(\\?["'])((?:[^"'\\]|\\[^"'])*)\4/g;
/** A bearer credential (`Authorization: Bearer X`). */
const BEARER = /\b(Bearer)\s+([A-Za-z0-9._~+/=-]{4,})/gi;

/** Sentence punctuation after a value ("--api-key=X: refused") is not part of it. */
function sentenceTail(value: string): string {
  return value.match(/[.,:;!?]+$/)?.[0] ?? "";
}

/** Whether a flag (`--hf-token`, `-p`) names a secret by the whole-segment rule. */
export function isSecretFlag(flag: string): boolean {
  const name = flag.replace(/^-+/, "");
  return name.length > 1 && isSecretKey(name);
}

/**
 * A message as it may be printed or stored: registered secrets, URL userinfo and secret query or
 * fragment values, the values of secret-looking flags (`--api-key=X`, `--password X`), of
 * secret-looking keys in JSON text (`"api_key": "X"`, `"auth": {…}`), of secret-looking names in
 * log text (`api_key='X'`, `api_key=X`, `x-api-key: X`, `Cookie: …`; ./scrub_pairs.ts) and
 * `Bearer X` / `Basic X` credentials become `***` (a flag's value given after a space counts from
 * 4 characters: prose such as "use --token to" stays as it is).
 * @example scrubText("bad value for --api-key=sk-1: see http://u:p@h/?token=t") // "bad value for --api-key=***: see http://***@h/?token=***"
 */
export function scrubText(text: string): string {
  if (!text) return text;
  let out = redactUrlsInText(scrubKnown(text));
  if (out.includes("-")) {
    out = out.replace(FLAG_EQ_IN_TEXT, (all, pre: string, flag: string, value: string) =>
      isSecretFlag(flag) ? `${pre}${flag}=${REDACTED}${sentenceTail(value)}` : all);
    out = out.replace(FLAG_SP_IN_TEXT, (all, pre: string, flag: string, gap: string, value: string) =>
      isSecretFlag(flag) && value !== REDACTED ? `${pre}${flag}${gap}${REDACTED}${sentenceTail(value)}` : all);
  }
  if (out.includes(":")) {
    out = redactBracketPairs(out);
    out = out.replace(JSON_PAIR_IN_TEXT, (all, q1: string, name: string, mid: string, q2: string, value: string) =>
      isSecretKey(name) && value !== "" && value !== REDACTED ? `${q1}${name}${q1}${mid}${q2}${REDACTED}${q2}` : all);
  }
  out = redactNamedValues(out);
  // "a Bearer token" is prose: a credential has a digit or a symbol, or is long.
  return redactBasic(out.replace(BEARER, (all, scheme: string, cred: string) => /^[A-Za-z]{1,19}$/.test(cred) ? all : `${scheme} ${REDACTED}`));
}

/**
 * A command line as ik stores or prints it: `--name=value` and `--name value` whose name looks
 * secret (`--password`, `--token`, `--hf-token`, `--api-key`, `--x-token`) get `***` as the value,
 * and every word is scrubbed as text (URLs, registered secrets). The argv a child runs with is
 * never passed through this.
 * @example scrubArgv(["serve", "--hf-token=hf_x", "--token", "t", "--max-tokens", "8"]) // ["serve", "--hf-token=***", "--token", "***", "--max-tokens", "8"]
 */
export function scrubArgv(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = String(argv[i]);
    const eq = a.indexOf("=");
    if (a.startsWith("-") && eq > 1 && isSecretFlag(a.slice(0, eq))) {
      out.push(`${a.slice(0, eq)}=${REDACTED}`);
      continue;
    }
    out.push(/^\s*[{[]/.test(a) ? scrubJsonWord(a) : scrubText(a));
    if (a.startsWith("-") && eq < 0 && isSecretFlag(a) && i + 1 < argv.length && !String(argv[i + 1]).startsWith("-")) {
      out.push(REDACTED);
      i++;
    }
  }
  return out;
}

/** A JSON argument (`--extra-body '{"api_key": …}'`) with its secret-looking keys redacted. */
function scrubJsonWord(word: string): string {
  try {
    return JSON.stringify(scrubValue(JSON.parse(word)));
  } catch {
    return scrubText(word);
  }
}

/** Whether an array reads like a command line (some word is a `--flag`). */
function looksLikeArgv(v: unknown[]): v is string[] {
  return v.length > 1 && v.every((x) => typeof x === "string") && v.some((x) => (x as string).startsWith("-"));
}

/**
 * A deep copy of a JSON document as it may be stored: values of secret-looking keys become `***`,
 * strings are scrubbed as text ({@link scrubText}), and arrays that read like a command line are
 * scrubbed as argv ({@link scrubArgv}).
 */
export function scrubValue<T>(value: T): T {
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (typeof v === "string") return scrubText(v);
  if (Array.isArray(v)) return looksLikeArgv(v) ? scrubArgv(v) : v.map(walk);
  if (v === null || typeof v !== "object") return v;
  if (ArrayBuffer.isView(v)) return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    out[k] = secretKeyCached(k) && x !== null && x !== undefined && x !== "" ? REDACTED : walk(x);
  }
  return out;
}

const keyCache = new Map<string, boolean>();
/** isSecretKey, remembered: JSONL rows repeat the same few keys thousands of times. */
function secretKeyCached(k: string): boolean {
  let r = keyCache.get(k);
  if (r === undefined) {
    r = isSecretKey(k);
    if (keyCache.size < 10_000) keyCache.set(k, r);
  }
  return r;
}

function lineReplacer(this: unknown, k: string, x: unknown): unknown {
  if (k !== "" && !Array.isArray(this) && secretKeyCached(k) && x !== null && x !== undefined && x !== "") return REDACTED;
  return x;
}

/**
 * One JSONL row (no newline) as it may be stored: values of secret-looking keys become `***` and
 * registered secrets are removed. Cheaper than {@link scrubValue} (no URL or argv rules): rows are
 * written at thousands per second.
 */
export function scrubJsonLine(value: unknown): string {
  // Rows almost never hold a secret key: look first (cheap), rebuild only when one does.
  return scrubKnown(hasSecretKey(value, 0) ? JSON.stringify(value, lineReplacer) : JSON.stringify(value));
}

/** Whether any object key inside `v` looks secret (arrays walked, primitives skipped). */
function hasSecretKey(v: unknown, depth: number): boolean {
  if (v === null || typeof v !== "object" || depth > 64) return false;
  if (Array.isArray(v)) {
    // Indexed, not for-of: rows carry arrays of hundreds of numbers (event_ms), walked here for every
    // row; the iterator took twice as long on Bun and Node (0.4 against 0.2 µs a row of 512 numbers)
    // and, in a V8 sampling profile of the Node build, allocated a result object per element.
    for (let i = 0; i < v.length; i++) {
      const x = v[i];
      if (x !== null && typeof x === "object" && hasSecretKey(x, depth + 1)) return true;
    }
    return false;
  }
  for (const k in v as Record<string, unknown>) {
    const x = (v as Record<string, unknown>)[k];
    if (secretKeyCached(k) && x !== null && x !== undefined && x !== "") return true;
    if (x !== null && typeof x === "object" && hasSecretKey(x, depth + 1)) return true;
  }
  return false;
}

/** `JSON.stringify(scrubValue(value), null, indent)`: a JSON file as it may be stored. */
export function scrubbedJson(value: unknown, indent?: number): string {
  return JSON.stringify(scrubValue(value), null, indent);
}
