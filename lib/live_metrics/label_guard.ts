/**
 * The guard every live-metrics label name and value passes before it exists: a label is sent to a
 * Prometheus server (or scraped from ik) and kept there for weeks, so it must never carry a secret.
 * An endpoint is named by its HMAC tag (`endpointTag`), never by its base URL.
 *
 * Refused: a label name that looks secret by the project's whole-segment rule (`api_key`, `token`,
 * `auth`…, see `isSecretKey`) or is not a Prometheus label name; a value that the project's
 * scrubber would change (`scrubText`: a registered secret, URL userinfo, a secret query value,
 * `Bearer X`, `--api-key=X`, a `"token": "X"` pair), a value that holds a URL with userinfo, one
 * that looks like a provider API key (`sk-…`, `hf_…`, `ghp_…`, `AKIA…`, a JWT), or one longer than
 * {@link MAX_LABEL_VALUE_LENGTH}. The refusal message never repeats the value.
 * @module
 */
import { isSecretKey } from "../evidence/redact.ts";
import { scrubText } from "../evidence/scrub.ts";

/** Longest label value accepted (characters): longer values are payloads, not labels. */
export const MAX_LABEL_VALUE_LENGTH = 256;

/** A Prometheus label name (names starting with `__` are reserved, and refused separately). */
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

/** Any `scheme://user@host` or `scheme://user:pass@host` inside the value. */
const URL_USERINFO = /[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^/?#\s@]*@/;

/** Provider API key and bearer-token shapes (prefix plus a long random tail). */
const KEY_SHAPES: readonly RegExp[] = [
  /\bsk-[A-Za-z0-9_-]{16,}/, // OpenAI, Anthropic (sk-ant-…), DeepSeek and most OpenAI-compatible providers
  /\bhf_[A-Za-z0-9]{20,}/, // Hugging Face
  /\b(gh[pousr]|github_pat)_[A-Za-z0-9_]{20,}/, // GitHub
  /\bxox[abposr]-[A-Za-z0-9-]{10,}/, // Slack
  /\bAKIA[0-9A-Z]{16}\b/, // AWS access key id
  /\bAIza[0-9A-Za-z_-]{30,}/, // Google API key
  /\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/, // a JWT
  /\b(nvapi|gsk|pplx|r8|fw)_[A-Za-z0-9_-]{20,}/, // NVIDIA, Groq, Perplexity, Replicate, Fireworks
];

/** Why a label name cannot be used, or null when it can. */
export function labelNameProblem(name: string): string | null {
  // Scrubbed before it is cut: a cut secret would no longer be recognised.
  if (!LABEL_NAME.test(name)) return `label name ${JSON.stringify(scrubText(String(name)).slice(0, 40))} is not [a-zA-Z_][a-zA-Z0-9_]*`;
  if (name.startsWith("__")) return `label name ${name} is reserved (starts with __)`;
  if (name === "le" || name === "quantile") return `label name ${name} is reserved for histograms and summaries`;
  if (isSecretKey(name)) return `label name ${name} looks like it holds a secret`;
  return null;
}

/**
 * Why a label value cannot be used (the reason never quotes the value), or null when it can.
 * @param name the label's name, for the message
 */
export function labelValueProblem(name: string, value: string): string | null {
  if (typeof value !== "string") return `label ${name}: value is not a string`;
  if (value.length > MAX_LABEL_VALUE_LENGTH) return `label ${name}: value is longer than ${MAX_LABEL_VALUE_LENGTH} characters`;
  if (URL_USERINFO.test(value)) return `label ${name}: value holds a URL with credentials (pass the endpoint's HMAC tag instead)`;
  if (KEY_SHAPES.some((re) => re.test(value))) return `label ${name}: value looks like an API key or token`;
  if (scrubText(value) !== value) return `label ${name}: value holds something the redaction rules remove (a secret, URL credentials or a secret query value)`;
  return null;
}

/** The error a refused label throws: its message names the label, never the value. */
export class LabelRefusedError extends Error {
  /** @param reason from {@link labelNameProblem} or {@link labelValueProblem} */
  constructor(reason: string) {
    super(`live metrics: ${reason}`);
    this.name = "LabelRefusedError";
  }
}

/**
 * Throws {@link LabelRefusedError} when a label name or value may not be used (see the module
 * doc); returns nothing when both are fine.
 * @example assertSafeLabel("endpoint", "hmac-sha256:3f…") // fine
 * @example assertSafeLabel("endpoint", "http://u:pw@h/v1") // throws: a URL with credentials
 */
export function assertSafeLabel(name: string, value: string): void {
  const why = labelNameProblem(name) ?? labelValueProblem(name, value);
  if (why) throw new LabelRefusedError(why);
}
