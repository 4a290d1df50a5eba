/** `ik bench vllm`'s flag checks (pure, < 1 s): vLLM's space-separated lists, goodput names, rates, endpoints, sampling fields. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { vllmPlan, type VllmFlagValues } from "../../lib/vllm_cli/options.ts";

const flags = (over: Partial<VllmFlagValues> = {}): VllmFlagValues => ({
  backend: "openai", host: "127.0.0.1", port: 8000, requestRate: "inf", goodput: [], metadata: [], words: [], metricPercentiles: "99", ...over,
});
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return [(e as { code: number }).code, (e as Error).message, (e as { hint: string }).hint] as const;
  }
  return null;
};

describe("vllmPlan", () => {
  test("words after --goodput and --metadata join their lists, as vLLM's nargs", () => {
    const p = vllmPlan(flags({ goodput: ["ttft:100"], metadata: ["a=1"], words: ["tpot:5", "b=x=y", "e2el:900"] }));
    assert.deepEqual(p.goodput, { ttft: 100, tpot: 5, e2el: 900 });
    assert.deepEqual(p.metadata, [["a", "1"], ["b", "x=y"]]);
    assert.equal(p.requestRate, Infinity);
    assert.equal(p.api, "completions");
    assert.equal(p.baseUrl, "http://127.0.0.1:8000");
    assert.deepEqual(p.percentileMetrics, ["ttft", "tpot", "itl"]);
  });
  test("--endpoint: vLLM's api_url is base_url + endpoint, so a path before the API's own is a prefix ik keeps", () => {
    assert.equal(vllmPlan(flags({ endpoint: "/v1/completions" })).baseUrl, "http://127.0.0.1:8000");
    assert.equal(vllmPlan(flags({ endpoint: "/openai/v1/completions", baseUrl: "http://gw:9000/" })).baseUrl, "http://gw:9000/openai");
    assert.equal(vllmPlan(flags({ backend: "openai-chat", endpoint: "/r/x/v1/chat/completions" })).baseUrl, "http://127.0.0.1:8000/r/x");
    for (const over of [{ endpoint: "/v1/chat/completions" }, { endpoint: "/completions" }, { endpoint: "x/v1/completions" }, { backend: "openai-chat", endpoint: "/v1/completions" }] as Partial<VllmFlagValues>[]) {
      const r = code(() => vllmPlan(flags(over)));
      assert.ok(r && r[0] === 64 && /endpoint|start with/.test(r[1]), JSON.stringify([over, r]));
    }
  });
  test("refusals are 64 with this command's help", () => {
    for (const over of [{ goodput: ["itl:5"] }, { words: ["stray"] }, { words: ["ttft:5"] }, { requestRate: "-1" }, { percentileMetrics: "ttft,foo" }, { metricPercentiles: "101" },
      { backend: "tgi" }, { extraBody: "[1]" }, { profile: true }, { header: ["x=1"] }] as Partial<VllmFlagValues>[]) {
      const r = code(() => vllmPlan(flags(over)));
      assert.ok(r, JSON.stringify(over));
      assert.equal(r[0], 64, JSON.stringify(over));
      assert.match(r[2], /ik bench vllm --help|drop it/, JSON.stringify(over));
    }
  });
  test("sampling flags become body fields; --extra-body wins; a warned flag is one line", () => {
    const p = vllmPlan(flags({ temperature: 0, topK: 5, extraBody: '{"top_k": 7, "seed": 1}', trustRemoteCode: true, backend: "openai-chat", host: "::1" }));
    assert.deepEqual(p.body, { top_k: 7, temperature: 0, seed: 1 });
    assert.equal(p.api, "chat");
    assert.equal(p.baseUrl, "http://[::1]:8000");
    assert.equal(p.warnings.length, 1);
    assert.match(p.warnings[0], /^--trust-remote-code is accepted and changes nothing here: /);
  });
});
