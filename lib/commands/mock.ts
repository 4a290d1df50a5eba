/** `ik mock` (being built). */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { command, constant } from "@optique/core/primitives";
import type { CommandContext } from "./context.ts";

/** Parser for `ik mock`. */
export const mockCommand = command("mock", object({ cmd: constant("mock" as const) }), { description: message`mock` });

/** Runs `ik mock`. */
export function runMock(ctx: CommandContext, _flags: { cmd: "mock" }): Promise<number> {
  ctx.err("ik mock: not built yet\n");
  return Promise.resolve(70);
}
