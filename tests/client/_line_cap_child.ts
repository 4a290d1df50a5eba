/**
 * Child process for line_cap.test.ts, run under `prlimit --as`: one request to the loopback port in
 * argv, whose server sends one endless SSE line. Prints the result's kind and message as one JSON
 * line. With the 64 MiB cap the request fails as `protocol` well inside the memory limit; without
 * it the runtime runs out of address space and the child dies, failing one test, not the machine.
 */
import process from "node:process";
import { parseEndpoint, streamCompletion } from "../../lib/client/mod.ts";

const port = Number(process.argv[process.argv.length - 1]);
const r = await streamCompletion(parseEndpoint(`http://127.0.0.1:${port}`), "chat", { model: "m" }, {
  idleTimeoutMs: 20_000,
  timeoutMs: 60_000,
});
const mem = process.memoryUsage();
console.log(JSON.stringify({ errorKind: r.errorKind, error: r.error, rssMiB: Math.round(mem.rss / 2 ** 20) }));
