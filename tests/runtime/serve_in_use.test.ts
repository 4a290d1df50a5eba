/**
 * The runtime shim's serve on a port already taken: a rejected promise (never a synchronous throw),
 * on Bun as on Deno, so a caller's `.catch` or `try { await … }` sees it either way.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { runtime } from "../../lib/runtime/mod.ts";

test("serve on a port in use rejects, and the first server still answers", async () => {
  const first = await runtime.serve(() => new Response("first"), { port: 0 });
  try {
    let thrown: unknown = null;
    let p: Promise<unknown> | null = null;
    try {
      p = runtime.serve(() => new Response("second"), { port: first.port });
    } catch (e) {
      thrown = e;
    }
    assert.equal(thrown, null, `a synchronous throw: ${String(thrown)}`);
    assert.ok(p instanceof Promise);
    await assert.rejects(p as Promise<unknown>);
    assert.equal(await (await fetch(`http://127.0.0.1:${first.port}/`)).text(), "first");
  } finally {
    await first.close();
  }
});
