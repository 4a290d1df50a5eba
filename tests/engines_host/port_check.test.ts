/** portInUse: a listening server → true, a closed port → false; a bound-but-not-accepting socket → true. */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { test } from "node:test";
import { portInUse, probeAddresses, probePort } from "../../lib/engines_host/port_check.ts";

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

test("host 'localhost' is busy when only [::1] answers (a client may go there first)", async (t) => {
  let s: Server;
  try {
    s = await listen("::1");
  } catch {
    t.skip("no IPv6 loopback here");
    return;
  }
  try {
    const p = await probePort("localhost", portOf(s));
    assert.equal(p.inUse, true, JSON.stringify(p));
    assert.match(p.connect, /::1 accepted/);
    assert.equal(await portInUse("127.0.0.1", portOf(s)), false, "an IPv4 literal is checked on IPv4 only");
  } finally {
    await close(s);
  }
});

test("host 'localhost' is busy when only 127.0.0.1 answers", async () => {
  const s = await listen("127.0.0.1");
  try {
    assert.equal(await portInUse("localhost", portOf(s)), true);
  } finally {
    await close(s);
  }
});

test("probeAddresses: localhost gives both loopbacks, a literal itself, a wildcard loopback", async () => {
  const l = (await probeAddresses("localhost")).map((a) => a.connect);
  assert.ok(l.includes("127.0.0.1") && l.includes("::1"), l.join(" "));
  assert.deepEqual(await probeAddresses("::1"), [{ connect: "::1", bind: "::1" }]);
  assert.deepEqual(await probeAddresses("0.0.0.0"), [{ connect: "127.0.0.1", bind: "0.0.0.0" }]);
});
