/**
 * Fault injection (MOCK.md "Faults"): the `--fault KIND[:S][@N or ~P]` syntax, and which faults
 * hit which request. Selection depends only on the request's serial number and `--seed`, so a
 * run with the same flags and the same request order injects the same faults.
 * @module
 */
import { type IkError, usageError } from "../cli/errors.ts";
import { MAX_DURATION_S } from "../cli/limits.ts";
import { uniformOf } from "./prng.ts";

/** Every fault kind the mock can inject. */
export const FAULT_KINDS = [
  "http429",
  "http500",
  "http503",
  "error-event",
  "truncate",
  "malformed",
  "stall",
  "slow-headers",
  "reset",
  "usage-mismatch",
] as const;

/** One fault kind. */
export type FaultKind = typeof FAULT_KINDS[number];

/** A parsed `--fault` value. */
export interface FaultSpec {
  /** What goes wrong. */
  kind: FaultKind;
  /** Seconds, for `stall` and `slow-headers` (at most {@link MAX_DURATION_S}). */
  seconds?: number;
  /**
   * Tokens the usage block claims beyond those streamed, for `usage-mismatch` (default 1): a
   * whole number other than 0, negative for a usage that lies low (the reported count is floored
   * at 0: `usage-mismatch:-1000` on a 16-token answer reports 0).
   */
  tokens?: number;
  /** `@N`: only every N-th request (serials N, 2N, …). */
  every?: number;
  /** `~P`: each request independently with probability P (seeded). */
  probability?: number;
  /** The text as given on the command line. */
  text: string;
}

const TIMED: readonly FaultKind[] = ["stall", "slow-headers"];
const SYNTAX =
  "KIND[:S][@N or ~P], e.g. http503@5, stall:2~0.1, reset, usage-mismatch:3, usage-mismatch:-2@4";

function bad(text: string, what: string): IkError {
  return usageError(`--fault ${text}`, what, `write ${SYNTAX}; kinds: ${FAULT_KINDS.join(", ")}`);
}

/**
 * Parses one `--fault` value.
 * @throws IkError (usage, exit 64) naming the value and what is wrong with it
 * @example parseFault("stall:1.5@3") // { kind: "stall", seconds: 1.5, every: 3, text: "stall:1.5@3" }
 */
export function parseFault(text: string): FaultSpec {
  const m = /^([a-z0-9-]+)(?::([^@~]*))?(?:([@~])(.*))?$/.exec(text.trim());
  if (!m) throw bad(text, "not a fault specification");
  const [, name, secondsText, sep, amountText] = m;
  if (!(FAULT_KINDS as readonly string[]).includes(name)) throw bad(text, `unknown fault kind '${name}'`);
  const kind = name as FaultKind;
  const spec: FaultSpec = { kind, text };
  if (TIMED.includes(kind)) {
    // MOCK.md: `:S` seconds for stall and slow-headers, tokens for usage-mismatch (default 1).
    if (secondsText === undefined) {
      spec.seconds = DEFAULT_FAULT_AMOUNT;
      return withSelector(spec, text, sep, amountText);
    }
    const s = Number(secondsText);
    if (secondsText.trim() === "" || !Number.isFinite(s) || s < 0) {
      throw bad(text, `'${secondsText}' is not a duration in seconds`);
    }
    if (s > MAX_DURATION_S) {
      throw bad(text, `${s} s is over the limit of ${MAX_DURATION_S} s (2^31 - 1 ms, the JS timer limit)`);
    }
    spec.seconds = s;
  } else if (kind === "usage-mismatch") {
    if (secondsText !== undefined) {
      const d = Number(secondsText);
      if (!/^-?\d+$/.test(secondsText) || d === 0 || !Number.isSafeInteger(d)) {
        throw bad(
          text,
          `'${secondsText}' must be a whole number of tokens other than 0 (negative: the usage lies low, floored at 0)`,
        );
      }
      spec.tokens = d;
    }
  } else if (secondsText !== undefined) {
    throw bad(text, `'${kind}' takes no ':S' (only stall, slow-headers and usage-mismatch do)`);
  }
  return withSelector(spec, text, sep, amountText);
}

/** MOCK.md's default `:S`: 1 second for stall and slow-headers, 1 token for usage-mismatch. */
const DEFAULT_FAULT_AMOUNT = 1;

/** Adds the `@N` / `~P` selector to a parsed fault. */
function withSelector(spec: FaultSpec, text: string, sep: string, amountText: string): FaultSpec {
  if (sep === "@") {
    const n = Number(amountText);
    if (!/^\d+$/.test(amountText) || n < 1) {
      throw bad(text, `'@${amountText}' must be a whole number of requests, 1 or more`);
    }
    spec.every = n;
  } else if (sep === "~") {
    const p = Number(amountText);
    if (amountText.trim() === "" || !Number.isFinite(p) || p <= 0 || p > 1) {
      throw bad(text, `'~${amountText}' must be a probability in (0, 1]`);
    }
    spec.probability = p;
  }
  return spec;
}

/** Whether fault number `index` of the list hits the request with 1-based `serial`. */
export function faultHits(spec: FaultSpec, index: number, serial: number, seed: number): boolean {
  if (spec.every !== undefined) return serial % spec.every === 0;
  if (spec.probability !== undefined) return uniformOf(seed, 0xfa17, index, serial) < spec.probability;
  return true;
}

/** The faults that apply to one request, sorted into the phases where they act. */
export interface RequestFaults {
  /** An HTTP error status answered instead of generating (the first listed wins). */
  httpStatus: 429 | 500 | 503 | null;
  /** Delay before the response headers, in ms. */
  slowHeadersMs: number;
  /** Pause after the first token event, in ms. */
  stallMs: number;
  /**
   * Completion tokens the usage block claims beyond those streamed (usage-mismatch; summed over
   * the faults that hit; negative when it lies low). The reported count is floored at 0.
   */
  usageExtra: number;
  /** What breaks the body (the first listed of error-event, truncate, malformed, reset wins). */
  body: "error-event" | "truncate" | "malformed" | "reset" | null;
}

/** Picks the faults for request `serial` (1-based) from the configured list. */
export function faultsFor(specs: readonly FaultSpec[], serial: number, seed: number): RequestFaults {
  const out: RequestFaults = { httpStatus: null, slowHeadersMs: 0, stallMs: 0, usageExtra: 0, body: null };
  specs.forEach((spec, i) => {
    if (!faultHits(spec, i, serial, seed)) return;
    switch (spec.kind) {
      case "http429":
      case "http500":
      case "http503":
        out.httpStatus ??= Number(spec.kind.slice(4)) as 429 | 500 | 503;
        break;
      case "slow-headers":
        out.slowHeadersMs += (spec.seconds ?? 0) * 1000;
        break;
      case "stall":
        out.stallMs += (spec.seconds ?? 0) * 1000;
        break;
      case "usage-mismatch":
        out.usageExtra += spec.tokens ?? 1;
        break;
      default:
        out.body ??= spec.kind;
    }
  });
  return out;
}
