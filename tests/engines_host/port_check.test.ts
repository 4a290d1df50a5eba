/** portInUse: a listening server → true, a closed port → false; a bound-but-not-accepting socket → true. */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { test } from "node:test";
import { portInUse, probePort } from "../../lib/engines_host/port_check.ts";

function listen(host: string, port = 0): Promise<Server> {
  return new Promise((resolve, reject) => {
    const s = createServer((c) => c.destroy());
    s.once("error", reject);
    s.listen({ host, port }, () => resolve(s));
  });
}
const portOf = (s: Server) => (s.address() as { port: number }).port;
const close = (s: Server) => new Promise<void>((r) => s.close(() => r()));

test("a listening server is in use (connect test)", async () => {
  const s = await listen("127.0.0.1");
  try {
    const p = await probePort("127.0.0.1", portOf(s));
    assert.equal(p.inUse, true);
    assert.equal(p.connect, "accepted");
    assert.equal(await portInUse("127.0.0.1", portOf(s)), true);
    assert.equal(await portInUse("0.0.0.0", portOf(s)), true, "an engine host of 0.0.0.0 is checked on loopback");
  } finally {
    await close(s);
  }
});

test("a closed port is free", async () => {
  const s = await listen("127.0.0.1");
  const port = portOf(s);
  await close(s);
  const p = await probePort("127.0.0.1", port);
  assert.equal(p.connect, "refused");
  assert.equal(p.bind, "free");
  assert.equal(p.inUse, false);
  assert.equal(await portInUse("127.0.0.1", port), false);
});

test("a listener on 0.0.0.0 makes 127.0.0.1 busy too", async () => {
  const s = await listen("0.0.0.0");
  try {
    assert.equal(await portInUse("127.0.0.1", portOf(s)), true);
  } finally {
    await close(s);
  }
});
