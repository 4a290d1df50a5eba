/**
 * serverGone: after a level with network failures, a /v1/models that cannot connect means the
 * server went away (a sentence naming the level); one that answers (any status) keeps the failures
 * as measured; a level without network failures asks nothing. Budget: < 1 s, both runtimes.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { parseEndpoint } from "../../lib/client/mod.ts";
import { markServerGone, serverGone } from "../../lib/bench/server_gone.ts";

const ep = parseEndpoint("http://127.0.0.1:9");
const level = (network: number) => ({ name: "r8", sent: 12, summary: { failures_by_kind: (network ? { network, http: 1 } : { http: 2 }) as Record<string, number> } });

describe("is the server gone after a level?", () => {
  test("network failures and /v1/models refused: gone, with the level and the counts", async () => {
    const refused = () => Promise.reject(Object.assign(new TypeError("fetch failed"), { cause: Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" }) }));
    const why = await serverGone(ep, level(7), { fetch: refused });
    assert.match(why ?? "", /^the server stopped answering during level r8: 7 of 12 request\(s\) failed on the network, and GET \/v1\/models after the level could not connect/);
  });

  test("a server that still answers (even 503 or 401) keeps its failures as measured", async () => {
    for (const status of [200, 503, 401]) {
      const answers = () => Promise.resolve(new Response(JSON.stringify({ object: "list", data: [] }), { status }));
      assert.equal(await serverGone(ep, level(7), { fetch: answers }), null, String(status));
    }
  });

  test("a timeout is not 'gone' (it may be busy), and no network failure asks nothing", async () => {
    let asked = 0;
    const never = (_u: string, init: RequestInit) => (asked++, new Promise<Response>((_, no) => init.signal?.addEventListener("abort", () => no(new Error("aborted")))));
    assert.equal(await serverGone(ep, level(0), { fetch: never }), null);
    assert.equal(asked, 0);
    const ac = new AbortController();
    ac.abort();
    assert.equal(await serverGone(ep, level(3), { fetch: never, signal: ac.signal }), null, "an interrupted run is not asked");
  });

  test("markServerGone: not judged, slo_ok null", () => {
    const l = { not_judged: null as string | null, summary: { slo_ok: false as boolean | null } };
    markServerGone(l);
    assert.deepEqual(l, { not_judged: "server unreachable", summary: { slo_ok: null } });
  });
});
