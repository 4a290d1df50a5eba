/**
 * The server check before measuring: an unreachable server is 69, an interrupt while asking is 130
 * (never "not reachable: aborted"). In process, loopback only, both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { checkServer } from "../../lib/bench/server_check.ts";
import { IkError } from "../../lib/cli/errors.ts";
import { ExitCode } from "../../lib/cli/exit_codes.ts";
import { parseEndpoint } from "../../lib/client/mod.ts";
import { closedPort } from "../client/_raw_server.ts";

test("Ctrl-C during the server check is an interrupt (130); a closed port is unreachable (69)", async () => {
  const ep = parseEndpoint(`http://127.0.0.1:${await closedPort()}`);
  await assert.rejects(checkServer(ep, "m", { signal: AbortSignal.abort() }), (e: unknown) => {
    assert.ok(e instanceof IkError);
    assert.equal(e.code, ExitCode.INTERRUPTED);
    return true;
  });
  await assert.rejects(checkServer(ep, "m"), (e: unknown) => e instanceof IkError && e.code === ExitCode.UNAVAILABLE);
});
