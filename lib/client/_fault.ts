/**
 * The client's fault switch, for the selftest mutation test only: a build made with
 * `scripts/build.sh --fault NAME` measures one thing wrong on purpose, so the selftest can show it
 * notices. The name is a build-time constant (`bun build --define __IK_CLIENT_FAULT__=...`), never
 * an environment variable: a normal build defines it as "" and source runs (bun test, deno test)
 * leave it undefined, so both see no fault. Each flag below spells the define out again, because
 * the minifier folds `"" === "name"` in place but does not propagate a constant across modules:
 * that way no variant name survives in a normal binary.
 * @module
 */
declare const __IK_CLIENT_FAULT__: string;

/** The active fault name, "" when none (every normal build and every source run). */
export const CLIENT_FAULT: string = typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "";

/** Every fault a build may ask for; scripts/build.sh refuses any other name (a test checks they agree). */
export const CLIENT_FAULT_NAMES: readonly string[] = [
  "kfirst-ignored",
  "events-as-ids",
  "no-count-mismatch",
  "ttft-plus-5ms",
  "tpot-plus-5pct",
  "clock-skew-50ms",
  "usage-trusted",
];

/** `kfirst-ignored`: k_first is always 1, even when the first event streamed several ids. */
export const FAULT_KFIRST_IGNORED: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "kfirst-ignored";

/** `events-as-ids`: the count is the number of token events, labelled `ids`. */
export const FAULT_EVENTS_AS_IDS: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "events-as-ids";

/** `no-count-mismatch`: count_mismatch is never set. */
export const FAULT_NO_COUNT_MISMATCH: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "no-count-mismatch";

/**
 * `usage-trusted`: usage.completion_tokens is taken as it comes, even below the number of token
 * events (0 included), and not flagged: the plausibility check is gone. Streamed ids still win.
 */
export const FAULT_USAGE_TRUSTED: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "usage-trusted";

/** `ttft-plus-5ms`: t_first is recorded 5 ms after the first token event arrived. */
export const FAULT_TTFT_PLUS_5MS: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "ttft-plus-5ms";

/** `tpot-plus-5pct`: TPOT is 5% higher (and decode tok/s its inverse). */
export const FAULT_TPOT_PLUS_5PCT: boolean =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "tpot-plus-5pct";

/**
 * `clock-skew-50ms`: a sharded load run paces its sends 50 ms ahead of the wall timetable (as a
 * shard whose clock ran 50 ms fast would) while its recorded clock anchor stays true, so the mock's
 * request log shows the shift and `ik merge` must name the shard. 0 in every other build.
 */
export const FAULT_CLOCK_SKEW_MS: number =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") === "clock-skew-50ms" ? 50 : 0;

/**
 * A request header a fault build sends (`x-ik-client-fault: NAME`), so a mock or a log shows the
 * request came from a mutated client; null in a normal build, where it folds away.
 */
export const FAULT_HEADER: readonly [string, string] | null =
  (typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : "") !== ""
    ? ["x-ik-client-fault", typeof __IK_CLIENT_FAULT__ === "string" ? __IK_CLIENT_FAULT__ : ""]
    : null;
