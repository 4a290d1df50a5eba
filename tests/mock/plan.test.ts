/** Output length rules, the timing plan, fault syntax and option checks (pure parts of the mock). */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { ExitCode } from "../../lib/cli/exit_codes.ts";
import {
  createMock,
  EventPlanner,
  faultsFor,
  parseFault,
  PERSONALITIES,
  planEvents,
  planOutput,
  resolveMockOptions,
} from "../../lib/mock/mod.ts";
import { Rng } from "../../lib/mock/prng.ts";
import { parseGenRequest } from "../../lib/mock/request.ts";

function req(body: Record<string, unknown>) {
  const r = parseGenRequest("chat", { model: "m", messages: [{ role: "user", content: "a b c" }], ...body });
  assert.ok(r.ok);
  return r.req;
}

describe("output length", () => {
  it("--eos-after ends naturally unless an honoured exact-length field is set", () => {
    const cases: [string, Record<string, unknown>, number, string][] = [
      ["vllm", { max_tokens: 24 }, 6, "stop"],
      ["vllm", { max_tokens: 24, ignore_eos: true }, 24, "length"],
      ["vllm", { max_tokens: 24, min_tokens: 24 }, 24, "length"],
      ["sglang", { max_tokens: 24, min_tokens: 24 }, 24, "length"],
      ["trtllm", { max_completion_tokens: 24, ignore_eos: true }, 24, "length"],
      ["llamacpp", { max_tokens: 24, ignore_eos: true }, 24, "length"],
      ["llamacpp", { max_tokens: 24, min_tokens: 24 }, 6, "stop"],
      ["openai", { max_tokens: 24, ignore_eos: true, min_tokens: 24 }, 6, "stop"],
      ["vllm", { max_tokens: 4 }, 4, "length"],
    ];
    for (const [engine, body, len, finish] of cases) {
      const p = planOutput(req(body), 6, 8192, PERSONALITIES[engine as keyof typeof PERSONALITIES].exact);
      assert.deepEqual([p.outputLen, p.finishReason], [len, finish], `${engine} ${JSON.stringify(body)}`);
    }
  });

  it("without max_tokens: no natural end unless --eos-after (MOCK.md: off), so the context left, finish 'length'", () => {
    const vllm = PERSONALITIES.vllm.exact;
    const open = planOutput(req({}), null, 100, vllm);
    assert.deepEqual([open.outputLen, open.finishReason], [100 - 10, "length"]);
    const eos = planOutput(req({}), 6, 100, vllm);
    assert.deepEqual([eos.outputLen, eos.finishReason], [6, "stop"]);
    assert.equal(planOutput(req({ max_tokens: 40 }), null, 8192, vllm).outputLen, 40);
    const capped = planOutput(req({ ignore_eos: true }), null, 20, vllm);
    assert.deepEqual([capped.outputLen, capped.finishReason], [20 - 10, "length"]);
  });
});

describe("timing plan", () => {
  const base = { ttftMs: 200, tpotMs: 20, tokensPerEvent: 1, specDepth: 0, specAccept: 0, jitterMs: 0 };

  it("first event at TTFT, then one per tokens_per_event × tpot, absolute offsets", () => {
    assert.deepEqual(planEvents(4, base, new Rng(0)).map((e) => [e.atMs, e.tokens]), [[200, 1], [220, 1], [
      240,
      1,
    ], [260, 1]]);
    assert.deepEqual(
      planEvents(7, { ...base, tokensPerEvent: 3 }, new Rng(0)).map((e) => [e.atMs, e.tokens]),
      [[200, 3], [260, 3], [280, 1]],
    );
  });

  it("a shorter last event waits only its own tokens × tpot: per-token TPOT = tpot for every length", () => {
    for (const k of [2, 3, 4, 5]) {
      for (let len = 1; len <= 25; len++) {
        const events = planEvents(len, { ...base, tokensPerEvent: k }, new Rng(0));
        assert.deepEqual(events[0], { atMs: 200, tokens: Math.min(k, len), accepted: 0, proposed: 0 });
        assert.equal(events.reduce((s, e) => s + e.tokens, 0), len);
        for (let i = 1; i < events.length; i++) {
          assert.equal(
            events[i].atMs - events[i - 1].atMs,
            events[i].tokens * 20,
            `k=${k} len=${len} i=${i}`,
          );
        }
        const last = events[events.length - 1];
        if (len > events[0].tokens) assert.equal((last.atMs - 200) / (len - events[0].tokens), 20);
      }
    }
  });

  it("is lazy: the planner makes one event at a time, so a 1e8-token answer costs nothing up front", () => {
    const planner = new EventPlanner(100_000_000, { ...base, tokensPerEvent: 3 }, new Rng(0));
    assert.deepEqual(planner.next(), { atMs: 200, tokens: 3, accepted: 0, proposed: 0 });
    assert.deepEqual(planner.next(), { atMs: 260, tokens: 3, accepted: 0, proposed: 0 });
  });

  it("speculative decoding: one event per step every tpot, 1 + accepted tokens, total exact", () => {
    const events = planEvents(200, { ...base, specDepth: 4, specAccept: 0.7 }, new Rng(3));
    assert.equal(events.reduce((s, e) => s + e.tokens, 0), 200);
    events.forEach((e, i) => {
      assert.equal(e.atMs, 200 + 20 * i);
      assert.equal(e.tokens, 1 + e.accepted);
      assert.equal(e.proposed, 4);
      assert.ok(e.accepted >= 0 && e.accepted <= 4);
    });
    const mean = 200 / events.length;
    // E[1 + accepted] for depth 4, p 0.7 = 1 + .7 + .49 + .343 + .2401 = 2.77
    assert.ok(mean > 2.3 && mean < 3.2, `mean tokens per event ${mean}`);
    const none = planEvents(10, { ...base, specDepth: 3, specAccept: 0 }, new Rng(3));
    assert.ok(none.every((e) => e.tokens === 1 && e.accepted === 0));
  });

  it("jitter: each gap ± uniform(J), seeded", () => {
    const a = planEvents(50, { ...base, jitterMs: 5 }, new Rng(9, 1));
    const b = planEvents(50, { ...base, jitterMs: 5 }, new Rng(9, 1));
    const c = planEvents(50, { ...base, jitterMs: 5 }, new Rng(9, 2));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
    assert.ok(Math.abs(a[0].atMs - 200) <= 5);
    for (let i = 1; i < a.length; i++) {
      const gap = a[i].atMs - a[i - 1].atMs;
      assert.ok(gap >= 15 && gap <= 25, `gap ${gap}`);
    }
    assert.ok(new Set(a.map((e, i) => (i ? e.atMs - a[i - 1].atMs : 0).toFixed(3))).size > 10, "gaps vary");
  });
});

describe("--fault syntax", () => {
  it("parses every kind with :S, @N and ~P", () => {
    assert.deepEqual(parseFault("http429"), { kind: "http429", text: "http429" });
    assert.deepEqual(parseFault("stall:1.5@3"), {
      kind: "stall",
      seconds: 1.5,
      every: 3,
      text: "stall:1.5@3",
    });
    assert.deepEqual(parseFault("slow-headers:2~0.25"), {
      kind: "slow-headers",
      seconds: 2,
      probability: 0.25,
      text: "slow-headers:2~0.25",
    });
    for (const k of ["http500", "http503", "error-event", "truncate", "malformed", "reset"]) {
      assert.equal(parseFault(`${k}@2`).every, 2);
    }
  });

  it("rejects bad syntax with a one-line usage error naming the value", () => {
    for (
      const bad of [
        "",
        "boom",
        "stall:",
        "stall:abc",
        "reset:2",
        "http503@0",
        "http503@1.5",
        "http503~0",
        "http503~1.5",
        "http503~",
        "truncate@x",
        "http 503",
      ]
    ) {
      assert.throws(() => parseFault(bad), (e: unknown) => {
        assert.ok(e instanceof IkError, `'${bad}' throws IkError`);
        assert.equal(e.code, ExitCode.USAGE);
        assert.match(e.where, /^--fault/);
        assert.doesNotMatch(e.message + e.hint, /\n/);
        return true;
      });
    }
  });

  it("@N hits every N-th request; ~P hits about P of them, the same ones for the same seed", () => {
    const every = [parseFault("http503@3")];
    assert.deepEqual([1, 2, 3, 4, 5, 6, 7].filter((s) => faultsFor(every, s, 0).httpStatus === 503), [3, 6]);
    const p = [parseFault("reset~0.3")];
    const hits = (seed: number) =>
      Array.from({ length: 400 }, (_, i) => i + 1).filter((s) => faultsFor(p, s, seed).body === "reset");
    assert.deepEqual(hits(5), hits(5));
    assert.notDeepEqual(hits(5), hits(6));
    assert.ok(hits(5).length > 80 && hits(5).length < 160, `~0.3 of 400 hit ${hits(5).length}`);
    const all = faultsFor(
      [parseFault("stall:1"), parseFault("slow-headers:0.5"), parseFault("truncate"), parseFault("reset")],
      1,
      0,
    );
    assert.deepEqual(all, {
      httpStatus: null,
      slowHeadersMs: 500,
      stallMs: 1000,
      usageExtra: 0,
      body: "truncate",
    });
  });
});

describe("--fault usage-mismatch and duration limits", () => {
  it("usage-mismatch[:D] parses (D tokens, default 1, negative lies low, never 0) with @N / ~P; stall/slow-headers :S at most 2147483 s", () => {
    assert.deepEqual(parseFault("usage-mismatch"), { kind: "usage-mismatch", text: "usage-mismatch" });
    assert.deepEqual(parseFault("usage-mismatch:5@2"), {
      kind: "usage-mismatch",
      tokens: 5,
      every: 2,
      text: "usage-mismatch:5@2",
    });
    assert.equal(parseFault("usage-mismatch:3~0.5").probability, 0.5);
    assert.equal(faultsFor([parseFault("usage-mismatch")], 1, 0).usageExtra, 1);
    assert.equal(faultsFor([parseFault("usage-mismatch:4@2")], 1, 0).usageExtra, 0);
    assert.equal(faultsFor([parseFault("usage-mismatch:4@2")], 2, 0).usageExtra, 4);
    // A negative D lies low; the faults that hit one request add up (the mock floors the count at 0).
    assert.equal(parseFault("usage-mismatch:-3@2").tokens, -3);
    assert.equal(parseFault("usage-mismatch:-9007199254740991").tokens, -9_007_199_254_740_991);
    const lowHigh = [parseFault("usage-mismatch:5"), parseFault("usage-mismatch:-6@2")];
    assert.deepEqual([1, 2].map((n) => faultsFor(lowHigh, n, 0).usageExtra), [5, -1]);
    assert.equal(parseFault("stall:2147483").seconds, 2_147_483);
    // MOCK.md: `:S` seconds for stall and slow-headers (default 1), with or without a selector.
    assert.deepEqual(parseFault("stall"), { kind: "stall", seconds: 1, text: "stall" });
    assert.deepEqual(parseFault("slow-headers@3"), { kind: "slow-headers", seconds: 1, every: 3, text: "slow-headers@3" });
    assert.equal(parseFault("stall~0.5").probability, 0.5);
    for (
      const bad of [
        "usage-mismatch:0",
        "usage-mismatch:-0",
        "usage-mismatch:1.5",
        "usage-mismatch:-1.5",
        "usage-mismatch:x",
        "usage-mismatch:-",
        "usage-mismatch:--2",
        "usage-mismatch:+2",
        "usage-mismatch:-9007199254740992",
        "stall:2147484",
        "slow-headers:3e9",
      ]
    ) {
      assert.throws(
        () => parseFault(bad),
        (e: unknown) => e instanceof IkError && e.code === ExitCode.USAGE && e.where.includes(bad),
        bad,
      );
    }
    assert.throws(() => parseFault("stall:2147484"), /over the limit of 2147483 s/);
  });
});

describe("options", () => {
  it("defaults follow MOCK.md's table", () => {
    const o = createMock().options;
    assert.deepEqual(
      [
        o.host,
        o.port,
        o.engine,
        o.model,
        o.maxModelLen,
        o.ttftMs,
        o.prefillMsPerToken,
        o.tpotMs,
        o.tokensPerEvent,
        o.eosAfter,
        o.jitterMs,
        o.seed,
        o.maxBatch,
        o.metrics,
      ],
      ["127.0.0.1", 8000, "vllm", "mock-model", 8192, 50, 0, 10, 1, null, 0, 0, null, true],
    );
  });

  it("rejects bad values and flags that need another flag, naming the flag", () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ engine: "tgi" }, /--engine/],
      [{ tokensPerEvent: 0 }, /--tokens-per-event/],
      [{ specAccept: 1.5, specDepth: 2 }, /--spec-accept/],
      [{ stepMs: 5 }, /--step-ms/],
      [{ kvTokens: 100 }, /--kv-tokens/],
      [{ specAccept: 0.5 }, /--spec-accept/],
      [{ tpotMs: -1 }, /--tpot-ms/],
      [{ host: "" }, /--host/],
      [{ host: " " }, /--host/],
      [{ ttftMs: 2 ** 31 }, /--ttft-ms/],
      [{ tpotMs: 2 ** 31 }, /--tpot-ms/],
      [{ jitterMs: 2 ** 31 }, /--jitter-ms/],
      [{ prefillMsPerToken: 2 ** 31 }, /--prefill-ms-per-token/],
      [{ maxBatch: 2, stepMs: 2 ** 31 }, /--step-ms/],
      [{ maxBatch: 2, stepMsPerSeq: 2 ** 31 }, /--step-ms-per-seq/],
      [{ exitAfterS: 2_147_484 }, /--exit-after-s/],
      [{ startupDelayS: 2_147_484 }, /--startup-delay-s/],
      [{ readyDelayS: 2_147_484 }, /--ready-delay-s/],
      [{ parentPid: 0 }, /--parent-pid/],
      [{ maxBatch: 2, ttftMs: 5 }, /--ttft-ms with --max-batch/],
      [{ maxBatch: 2, tpotMs: 5 }, /--tpot-ms with --max-batch/],
      [{ maxBatch: 2, tokensPerEvent: 2 }, /--tokens-per-event with --max-batch/],
      [{ maxBatch: 2, specDepth: 2, specAccept: 0.5 }, /--spec-depth with --max-batch/],
      [{ maxBatch: 2, specAccept: 0.5 }, /--spec-accept with --max-batch/],
    ];
    for (const [opts, where] of bad) {
      assert.throws(
        () => resolveMockOptions(opts),
        (e: unknown) => e instanceof IkError && e.code === ExitCode.USAGE && where.test(e.where),
        JSON.stringify(opts),
      );
    }
  });

  it("accepts the limits themselves, and defaults (not given) of the timing-model flags with --max-batch", () => {
    const o = resolveMockOptions({
      ttftMs: 2 ** 31 - 1,
      tpotMs: 2 ** 31 - 1,
      exitAfterS: 2_147_483,
      startupDelayS: 2_147_483,
      readyDelayS: 2_147_483,
    });
    assert.equal(o.exitAfterS, 2_147_483);
    const sim = resolveMockOptions({ maxBatch: 2, ttftMs: undefined, tpotMs: undefined, stepMs: 5 });
    assert.deepEqual([sim.maxBatch, sim.ttftMs, sim.tpotMs, sim.tokensPerEvent], [2, 50, 10, 1]);
  });
});
