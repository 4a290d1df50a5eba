/**
 * The `--request-log` line (MOCK.md "Flags"), one per finished generation request:
 *
 * `ik-request serial=N prompt=P cached=C gen=G acc=A prop=R first_ms=F last_ms=L recv_wall_ms=W`
 *
 * - N: the request's serial (the fault serial, 1-based); P: prompt tokens (0 when the body could
 *   not be read or parsed); C: of those, the prefix-cached ones (`--prefix-cache-tokens`; 0 when
 *   the cache is off or the request was refused); G: output tokens streamed; A/R:
 *   accepted/proposed draft tokens.
 * - F, L: when the mock really wrote the first and the last token event, in ms after it finished
 *   reading the request, three decimals, stamped with performance.now() right after the chunk is
 *   handed to the response stream. A whole (`stream: false`) answer has one write, so F = L =
 *   when its body was handed over. `-` when no token was written (HTTP errors, a client gone
 *   before the first token, a reset before any token).
 * - W: wall-clock epoch ms when the request was read, `performance.timeOrigin + performance.now()`,
 *   three decimals.
 *
 * Every request that got a serial ends with exactly one line: complete, aborted, faulted, or
 * answered with an HTTP error (413, 400, the http4xx/5xx faults, ...).
 * @module
 */

/** The fields of one request-log line. */
export interface RequestLogFields {
  /** The request's serial (1-based). */
  serial: number;
  /** Prompt tokens (0 when unknown). */
  promptTokens: number;
  /** Prefix-cached prompt tokens (0 when the cache is off or the request was refused). */
  cachedTokens: number;
  /** Output tokens streamed. */
  generated: number;
  /** Accepted draft tokens. */
  accepted: number;
  /** Proposed draft tokens. */
  proposed: number;
  /** First token write, ms after the request was read; null when none. */
  firstMs: number | null;
  /** Last token write, ms after the request was read; null when none. */
  lastMs: number | null;
  /** Wall-clock epoch ms when the request was read. */
  recvWallMs: number;
}

const ms3 = (v: number | null) => (v === null ? "-" : v.toFixed(3));

/** Formats one `ik-request …` line (without the newline). */
export function requestLogLine(f: RequestLogFields): string {
  return `ik-request serial=${f.serial} prompt=${f.promptTokens} cached=${f.cachedTokens} ` +
    `gen=${f.generated} acc=${f.accepted} prop=${f.proposed} first_ms=${ms3(f.firstMs)} last_ms=${
      ms3(f.lastMs)
    } ` +
    `recv_wall_ms=${f.recvWallMs.toFixed(3)}`;
}

/** The wall-clock epoch ms of a moment on the mock's monotonic clock (performance.now). */
export function wallMsOf(monotonicMs: number): number {
  return performance.timeOrigin + monotonicMs;
}
