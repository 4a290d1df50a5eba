/**
 * Child process for corrupt_gzip.test.ts: a loopback server answers with a gzip-encoded SSE body
 * whose bytes are corrupt (or cut short, per argv), the client reads it, and the result's kind and
 * message go to stdout as one JSON line. The parent checks that stderr stays empty: Bun's own
 * decoder used to print "Decompression error: ZlibError" there.
 */
import process from "node:process";
import { gzipSync } from "node:zlib";
import { parseEndpoint, streamCompletion } from "../../lib/client/mod.ts";
import { chatChunk, DONE, rawServer } from "./_raw_server.ts";

const how = process.argv[process.argv.length - 1];
const good = new Uint8Array(gzipSync(new TextEncoder().encode(chatChunk({ content: "a" }) + DONE)));
const body = good.slice();
if (how === "corrupt") for (let i = 12; i < body.length - 8; i++) body[i] ^= 0x5a;
const bytes = how === "cut" ? good.slice(0, 15) : body;
const srv = await rawServer(() => [
  { head: 200, headers: { "content-type": "text/event-stream", "content-encoding": "gzip" } },
  { bytes },
  { end: true },
]);
const r = await streamCompletion(parseEndpoint(`http://127.0.0.1:${srv.port}`), "chat", {}, {
  idleTimeoutMs: 5000,
  timeoutMs: 10_000,
});
await srv.close();
console.log(JSON.stringify({ ok: r.ok, errorKind: r.errorKind, error: r.error, text: r.text }));
