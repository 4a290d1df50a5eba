/**
 * The flags and parser of `ik selftest`, and their parsed type. Parser only: the checks are
 * selftest.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, flag } from "@optique/core/primitives";

/** Builds the parser for `ik selftest` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const selftestCommand = () => command(
  "selftest",
  object({
    cmd: constant("selftest" as const),
    quick: withDefault(
      flag("--quick", {
        description:
          message`One personality (vllm) with packed events, speculative decoding, a lying usage and the timing checks; no faults, no headroom: under 10 s.`,
      }),
      false,
    ),
    json: withDefault(
      flag("--json", {
        description: message`Print the checks as one JSON object on stdout (numbers as numbers).`,
      }),
      false,
    ),
    verbose: withDefault(
      flag("--verbose", {
        description:
          message`Print every check as a table (by default: a line per group, then only the FAIL and inconclusive rows).`,
      }),
      false,
    ),
  }),
  {
    brief: message`Check ik against its built-in mock.`,
    description:
      message`Starts the mock (a separate process per run, on 127.0.0.1 with a free port, told ik's pid), measures TTFT, TPOT, token counts, packed events, exact length vs natural EOS, a lying usage, every fault kind and the client's headroom through the real client, and judges each timing against the mock's own clock. Exit 0 only if every check passes, 1 if one fails, 69 if the host was too busy to judge the timing (inconclusive), 130 if interrupted.`,
  },
);

/** The parsed flags of `ik selftest`. */
export type SelftestFlags = InferValue<ReturnType<typeof selftestCommand>>;
