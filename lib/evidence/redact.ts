/**
 * Keeping secrets off disk and off the screen (CONTRACTS.md "Redaction"): secret-looking keys in
 * bodies and arguments, a URL's userinfo and secret-looking query values, and the API key's own
 * value wherever a server echoes it back.
 * @module
 */

/** What a redacted value is replaced by. */
export const REDACTED = "***";

const SECRET_SEGMENTS = new Set([
  "key", "apikey", "token", "secret", "password", "passwd", "authorization", "auth", "cookie",
]);
/** Whole names that are secrets although no single segment says so. */
const SECRET_NAMES = new Set(["api_key", "apikey", "access_token", "refresh_token", "x_api_key", "set_cookie"]);

/** Splits a snake_case, kebab-case or camelCase name into lower-case segments. */
function segments(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2")
    .toLowerCase()
    .split(/[_\-.\s]+/)
    .filter((s) => s.length > 0);
}

/**
 * Whether a key looks like it holds a secret, matched on whole segments, case-insensitive:
 * `api_key`, `apiKey`, `*_key`, `key`, `token`, `access_token`, `secret`, `password`,
 * `authorization`, `auth`, `cookie`. Never `tokens`, `max_tokens`, `token_ids` or other workload
 * fields: only a name whose LAST segment is secret-like counts (`token_ids` ends in `ids`), and not
 * one or two segments after `per` (`prefill_ms_per_token`, `joules_per_output_token` are units).
 * @example isSecretKey("openaiApiKey") // true; isSecretKey("max_tokens") // false
 */
export function isSecretKey(name: string): boolean {
  const segs = segments(name);
  if (segs.length === 0) return false;
  if (SECRET_NAMES.has(segs.join("_"))) return true;
  // "… per token", "… per output token", "… per key": a unit (`--prefill-ms-per-token 0.05`,
  // `joules_per_output_token`), not a secret: "per" one or two segments before the last.
  const last = segs[segs.length - 1];
  if ((last === "token" || last === "key") && segs.slice(-3, -1).includes("per")) return false;
  return SECRET_SEGMENTS.has(segs[segs.length - 1]);
}

/** Redacts the value part of `name=value` pairs in a query string or fragment whose name is secret-looking. */
function redactQuery(query: string): string {
  return query.replace(/([?&;#])([^=&;#]*)=([^&;#]*)/g, (all, sep: string, name: string) => {
    let decoded = name;
    try {
      decoded = decodeURIComponent(name);
    } catch { /* keep raw */ }
    return isSecretKey(decoded) ? `${sep}${name}=${REDACTED}` : all;
  });
}

/**
 * A URL as it may be printed or stored: userinfo (`user:pass@`) becomes `***@`, secret-looking
 * query and fragment values (`?api_key=…`, `#access_token=…`) become `***`. Works on strings that are not valid URLs too (`htp://u:p@h:99999/`),
 * because those are exactly the ones echoed in error messages.
 * @example redactUrl("http://u:pw@h:8000/v1?api_key=s&x=1") // "http://***@h:8000/v1?api_key=***&x=1"
 */
export function redactUrl(url: string): string {
  let out = url;
  // userinfo: between "scheme://" (or a leading "//") and the first "@" before any "/", "?" or "#".
  out = out.replace(/^([a-zA-Z][a-zA-Z0-9+.-]*:\/\/|\/\/)([^/?#]*)@/, (_all, scheme: string) => `${scheme}${REDACTED}@`);
  // A scheme-less "user:pass@host" (typed without http://).
  if (!/^[a-zA-Z][a-zA-Z0-9+.-]*:\/\//.test(out)) out = out.replace(/^([^/?#@\s]*:[^/?#@\s]*)@/, `${REDACTED}@`);
  // Query and fragment alike: an OAuth-style fragment (`#access_token=…`) carries secrets too.
  const q = out.search(/[?#]/);
  if (q >= 0) out = out.slice(0, q) + redactQuery(out.slice(q));
  return out;
}

const URL_IN_TEXT = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s'"<>`]+/g;

/** Redacts every URL-looking substring of a message (see {@link redactUrl}). */
export function redactUrlsInText(text: string): string {
  return text.replace(URL_IN_TEXT, (u) => {
    // Sentence punctuation after a URL ("…/v1: refused") is not part of it.
    const tail = u.match(/[.,:;!?)\]]+$/)?.[0] ?? "";
    return redactUrl(u.slice(0, u.length - tail.length)) + tail;
  });
}

/**
 * Replaces every occurrence of a secret value (the API key) in text. Values shorter than 4
 * characters are not scrubbed: they would mangle ordinary text and protect nothing.
 */
export function scrubSecret(text: string, secret: string | null | undefined): string {
  if (!secret || secret.length < 4 || !text) return text;
  return text.split(secret).join(REDACTED);
}

/**
 * A deep copy with the values of secret-looking keys replaced by `***` (strings, numbers,
 * objects alike). Arrays are walked; other values are copied as they are.
 */
export function redactObject<T>(value: T): T {
  return walk(value) as T;
}

function walk(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(walk);
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    out[k] = isSecretKey(k) && x !== null && x !== undefined && x !== "" ? REDACTED : walk(x);
  }
  return out;
}
