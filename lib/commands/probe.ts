/** `ik probe` (being built). */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { command, constant } from "@optique/core/primitives";
import type { CommandContext } from "./context.ts";

/** Parser for `ik probe`. */
export const probeCommand = command("probe", object({ cmd: constant("probe" as const) }), { description: message`probe` });

/** Runs `ik probe`. */
export function runProbe(ctx: CommandContext, _flags: { cmd: "probe" }): Promise<number> {
  ctx.err("ik probe: not built yet\n");
  return Promise.resolve(70);
}
