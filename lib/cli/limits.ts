/**
 * The limits every command agrees on (../shared/spec/CONTRACTS.md "Limits"), in one place.
 * @module
 */
import { type Message, message, text } from "@optique/core/message";

/** The longest duration any flag accepts, in seconds: 2^31 − 1 ms, the JS timer limit. */
export const MAX_DURATION_S = 2_147_483;

/** The longest duration in ms a single timer can wait (setTimeout overflows above it). */
export const MAX_TIMER_MS = 2_147_483_647;

/** The longest SSE line the client accepts; past it the request fails as `protocol`. */
export const MAX_SSE_LINE_BYTES = 64 * 1024 * 1024;

/** The largest prompt set, decompressed; past it the load is a data error (65). */
export const MAX_PROMPT_SET_BYTES = 1024 * 1024 * 1024;

/** The most bytes of an HTTP error body kept. */
export const MAX_ERROR_BODY_BYTES = 64 * 1024;

/** The longest error message kept from a server, in characters. */
export const MAX_ERROR_MESSAGE_CHARS = 300;

/** The largest request body the mock reads; past it, 413 (MOCK.md "Limits"). */
export const MAX_MOCK_BODY_BYTES = 100 * 1024 * 1024;

/**
 * The error for a value below a float flag's tiny positive minimum: the parser library prints the
 * minimum with 3 decimals ("greater than or equal to 0", which 0 itself is). A positive value under
 * the minimum is told the minimum itself (1e-9 is above 0).
 * @param min the flag's minimum, as given to `float({ min })`
 * @example float({ min: 1e-6, errors: { belowMinimum: aboveZero(1e-6) } })
 */
export const aboveZero = (min: number) => (value: number): Message =>
  value > 0
    ? message`Expected a number of at least ${text(String(min))}, but got ${text(String(value))}.`
    : message`Expected a number above 0, but got ${text(String(value))}.`;
