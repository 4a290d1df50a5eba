/**
 * What a command prints or stores from user input and server text: the base URL as typed is
 * replaced by its redacted form (userinfo, secret query values), any other URL is redacted, and
 * the API key's value is scrubbed.
 * @module
 */
import { IkError } from "../cli/errors.ts";
import { redactUrl, scrubSecret } from "../evidence/redact.ts";
import { scrubText } from "../evidence/scrub.ts";
import { escapeTerminalLine } from "./escape.ts";

/** A text cleaner. */
export type Sanitize = (text: string) => string;

/**
 * A cleaner for one command run: the raw --base-url and the API key value, then the one scrubber
 * (../evidence/scrub.ts: registered secrets, URL secrets, secret flags and JSON keys, `Bearer X`).
 */
export function makeSanitizer(rawUrl: string, apiKey: string | undefined): Sanitize {
  const raws = [...new Set([rawUrl, rawUrl.trim()])].filter((r) => r.length > 0);
  return (text: string) => {
    let out = text;
    for (const r of raws) out = out.split(r).join(redactUrl(r));
    return scrubText(scrubSecret(out, apiKey));
  };
}

/** A deep copy with `clean` applied to every string (so JSON stays exact JSON). */
export function cleanStrings<T>(v: T, clean: Sanitize): T {
  if (typeof v === "string") return clean(v) as T;
  if (Array.isArray(v)) return v.map((x) => cleanStrings(x, clean)) as T;
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) out[k] = cleanStrings(x, clean);
  return out as T;
}

/**
 * An IkError with its text cleaned and terminal escapes made visible (a bad --base-url or server
 * text may be in it); other errors unchanged.
 */
export function sanitizedError(e: unknown, clean: Sanitize): unknown {
  if (!(e instanceof IkError)) return e;
  const line = (s: string) => escapeTerminalLine(clean(s));
  const c = new IkError(e.code, line(e.where), line(e.message), line(e.hint));
  c.stack = clean(String(e.stack));
  return c;
}
