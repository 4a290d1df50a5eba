/**
 * One abort listener per signal for every request that watches it (lib/client/_abort_watch.ts):
 * watchers told once, in the order they began, an unwatched one never; the signal itself holds
 * one listener however many watch.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { abortWatchers, unwatchAbort, watchAbort } from "../../lib/client/_abort_watch.ts";

/** A signal whose addEventListener calls are counted. */
function counted(): { ac: AbortController; listeners: () => number } {
  const ac = new AbortController();
  let n = 0;
  const add = ac.signal.addEventListener.bind(ac.signal);
  ac.signal.addEventListener = ((...a: Parameters<AbortSignal["addEventListener"]>) => {
    n++;
    return add(...a);
  }) as AbortSignal["addEventListener"];
  return { ac, listeners: () => n };
}

describe("abort watch", () => {
  it("a thousand watchers, one listener; on abort each still watching is told once, in order", () => {
    const { ac, listeners } = counted();
    const told: number[] = [];
    const ws = Array.from({ length: 1000 }, (_, i) => ({ handleEvent: () => void told.push(i) }));
    for (const w of ws) watchAbort(ac.signal, w);
    watchAbort(ac.signal, ws[5]); // watching twice is watching once
    for (let i = 0; i < 1000; i += 3) unwatchAbort(ac.signal, ws[i]);
    assert.equal(listeners(), 1);
    assert.equal(abortWatchers(ac.signal), 1000 - 334);
    ac.abort();
    assert.deepEqual(told, Array.from({ length: 1000 }, (_, i) => i).filter((i) => i % 3 !== 0));
    assert.equal(abortWatchers(ac.signal), 0);
    ac.abort();
    assert.equal(told.length, 1000 - 334, "told once");
  });

  it("a signal already aborted: nothing is watched and nothing told", () => {
    let told = 0;
    const s = AbortSignal.abort();
    watchAbort(s, { handleEvent: () => void told++ });
    assert.equal(abortWatchers(s), 0);
    assert.equal(told, 0);
  });

  it("signals are apart: aborting one tells only its own watchers", () => {
    const a = new AbortController(), b = new AbortController();
    const told: string[] = [];
    watchAbort(a.signal, { handleEvent: () => void told.push("a") });
    watchAbort(b.signal, { handleEvent: () => void told.push("b") });
    b.abort();
    assert.deepEqual(told, ["b"]);
    assert.equal(abortWatchers(a.signal), 1);
    unwatchAbort(a.signal, { handleEvent() {} }); // not watching: nothing happens
    assert.equal(abortWatchers(a.signal), 1);
  });
});
