/** `ik selftest` (being built). */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { command, constant } from "@optique/core/primitives";
import type { CommandContext } from "./context.ts";

/** Parser for `ik selftest`. */
export const selftestCommand = command("selftest", object({ cmd: constant("selftest" as const) }), { description: message`selftest` });

/** Runs `ik selftest`. */
export function runSelftest(ctx: CommandContext, _flags: { cmd: "selftest" }): Promise<number> {
  ctx.err("ik selftest: not built yet\n");
  return Promise.resolve(70);
}
