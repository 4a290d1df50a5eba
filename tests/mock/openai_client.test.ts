/**
 * The official `openai` npm client against a real loopback `ik mock` (the compiled binary,
 * IK_BIN or dist/ik) for every personality: streamed chat and completions with usage, whole
 * answers, and NotFoundError for an unknown model where the engine checks the name.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import OpenAI from "openai";
import { ENGINES } from "../../lib/mock/mod.ts";
import { type MockProc, startMock } from "./_helpers.ts";

for (const engine of ENGINES) {
  describe(`openai client ↔ ik mock --engine ${engine}`, () => {
    let mock: MockProc;
    let client: OpenAI;
    before(async () => {
      mock = await startMock(["--engine", engine, "--ttft-ms", "5", "--tpot-ms", "1"]);
      client = new OpenAI({
        baseURL: `${mock.base}/v1`,
        apiKey: "not-a-real-key",
        maxRetries: 0,
        timeout: 10_000,
      });
    });
    after(async () => {
      await mock?.stop();
    });

    it("streams chat with usage", async () => {
      const stream = await client.chat.completions.create({
        model: "mock-model",
        messages: [{ role: "user", content: `hello from the openai client to ${engine}` }],
        max_tokens: 6,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | null | undefined;
      let finish: string | null = null;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text.trim().split(/\s+/).length, 6);
      assert.equal(finish, "length");
      assert.ok(usage, "usage arrived");
      assert.equal(usage.completion_tokens, 6);
      assert.equal(usage.prompt_tokens, 7 + 4 + 3, "7 words + 4, + 3");
      assert.equal(usage.total_tokens, usage.prompt_tokens + 6);
    });

    it("streams completions with usage", async () => {
      const stream = await client.completions.create({
        model: "mock-model",
        prompt: "The capital of France is",
        max_tokens: 5,
        stream: true,
        stream_options: { include_usage: true },
      });
      let text = "";
      let usage: OpenAI.CompletionUsage | null | undefined;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.text ?? "";
        if (chunk.usage) usage = chunk.usage;
      }
      assert.equal(text.trim().split(/\s+/).length, 5);
      assert.equal(usage?.completion_tokens, 5);
      assert.equal(usage?.prompt_tokens, 5);
    });

    it("answers whole (stream: false)", async () => {
      const r = await client.chat.completions.create({
        model: "mock-model",
        messages: [{ role: "user", content: "hi" }],
        max_tokens: 3,
      });
      assert.equal(r.choices[0].message.content?.trim().split(/\s+/).length, 3);
      assert.equal(r.usage?.completion_tokens, 3);
    });

    it(
      engine === "vllm" || engine === "openai"
        ? "an unknown model is NotFoundError"
        : "an unknown model is served anyway",
      async () => {
        const ask = () =>
          client.chat.completions.create({
            model: "no-such-model",
            messages: [{ role: "user", content: "hi" }],
            max_tokens: 2,
          });
        if (engine === "vllm" || engine === "openai") await assert.rejects(ask, OpenAI.NotFoundError);
        else assert.equal((await ask()).usage?.completion_tokens, 2);
      },
    );
  });
}
