/**
 * A request body as the attempts of one request send it: serialized once, dropped at the first
 * response head (see {@link RequestPayload}).
 * @module
 */

/** The tokens a JSON body asks for (`max_tokens`, or chat's `max_completion_tokens`), or null (a serialized body, or none). */
function askedTokens(body: unknown): number | null {
  if (body === null || typeof body !== "object") return null;
  const b = body as { max_tokens?: unknown; max_completion_tokens?: unknown };
  const n = typeof b.max_tokens === "number" ? b.max_tokens : b.max_completion_tokens;
  return typeof n === "number" ? n : null;
}

/**
 * A request body, serialized once for every attempt of it, and held only while an attempt may
 * still need it: the first attempt that hears a response head drops the text (a request answered
 * is never sent again), so an open stream does not keep its prompt (issue 21: ~1.3 KB a stream,
 * and each KB a stream held for a request's life is ~3 MB of peak RSS at 1,000 streams).
 */
export class RequestPayload {
  /** The serialized body, or null once a response head has come. */
  text: string | null;
  /** The tokens the body asks for (`max_tokens`, `max_completion_tokens`), or null. */
  readonly asked: number | null;

  /**
   * @param body the JSON body, or its serialized text
   * @throws TypeError for a body JSON cannot serialize (a cycle, a BigInt): the caller's mistake, not a failed request
   */
  constructor(body: unknown) {
    this.text = typeof body === "string" ? body : JSON.stringify(body);
    this.asked = askedTokens(body);
  }
}
