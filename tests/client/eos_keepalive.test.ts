/**
 * Two shapes the engine fixtures do not show: an event with empty data (a proxy's keep-alive:
 * neither a token nor a failure), and a stream that stops on EOS with its count from usage (the EOS
 * token's chunk has no text but usage counts it: the span ends at that chunk, so TPOT divides
 * n − 1 gaps by n − 1 tokens). Injected fetch, manual clock; both runtimes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { requestRow } from "../../lib/client/mod.ts";
import { runScripted } from "./_manual.ts";
import { chatChunk, DONE, usageChunk } from "./_raw_server.ts";

test("an event with empty data between chunks is skipped: no failure, no token (it failed the request as a malformed chunk)", async () => {
  for (const empty of ["data:\n\n", "data: \n\n", "data:  \n\n", "event: message\ndata:\n\n"]) {
    const r = await runScripted([
      { at: 1, text: chatChunk({ role: "assistant", content: "" }) },
      { at: 10, text: chatChunk({ content: "a" }) + empty },
      { at: 20, text: empty + chatChunk({ content: "b" }) },
      { at: 30, text: chatChunk({ content: "c" }, { finish_reason: "length" }) + DONE },
    ]);
    assert.equal(r.ok, true, `${JSON.stringify(empty)}: ${r.error}`);
    assert.equal(r.nTokenEvents, 3);
    assert.equal(r.nTokens, 3);
    assert.equal(r.text, "abc");
  }
  // An `event: error` with empty data is still an error event.
  const e = await runScripted([{ at: 1, text: chatChunk({ content: "a" }) + "event: error\ndata:\n\n" + DONE }]);
  assert.equal(e.errorKind, "protocol");
});

test("an EOS stop counted by usage: the last token is the finish chunk, TPOT the pacing (it read 8/9 of it)", async () => {
  // vLLM without token ids: 5 text tokens 50 ms apart, then the EOS chunk (content "", finish_reason
  // stop) 50 ms later; usage counts 6 (the EOS token too).
  const steps = [{ at: 0, text: chatChunk({ role: "assistant", content: "" }) }];
  for (let i = 0; i < 5; i++) steps.push({ at: 100 + 50 * i, text: chatChunk({ content: `t${i}` }) });
  steps.push({ at: 350, text: chatChunk({ content: "" }, { finish_reason: "stop" }) });
  steps.push({ at: 351, text: usageChunk(6) + DONE });
  const r = await runScripted(steps);
  assert.equal(r.ok, true, r.error ?? "");
  assert.deepEqual([r.nTokens, r.tokenCountMethod, r.nTokenEvents], [6, "usage", 5]);
  assert.equal(r.tLastMs, 350);
  assert.equal(requestRow(r).tpot_ms, 50);
  // A length stop, or usage that counts no EOS (5 over 5 events), ends at the last token event.
  const length = [...steps.slice(0, 6), { at: 350, text: chatChunk({ content: "" }, { finish_reason: "length" }) }, { at: 351, text: usageChunk(6) + DONE }];
  assert.equal((await runScripted(length)).tLastMs, 300);
  const noEos = [...steps.slice(0, 7), { at: 351, text: usageChunk(5) + DONE }];
  const r5 = await runScripted(noEos);
  assert.equal(r5.tLastMs, 300);
  assert.equal(requestRow(r5).tpot_ms, 50);
});

test("finish_reason 'abort' (SGLang's graceful abort) or 'error' (vLLM's internal failure) is a partial answer: protocol", async () => {
  for (const fr of ["abort", "error"]) {
    const r = await runScripted([
      { at: 1, text: chatChunk({ content: "a" }) },
      { at: 2, text: chatChunk({ content: "" }, { finish_reason: fr }) + DONE },
    ]);
    assert.equal(r.ok, false, fr);
    assert.equal(r.errorKind, "protocol");
    assert.match(r.error ?? "", new RegExp(`finish_reason '${fr}': the answer is partial`));
  }
  for (const fr of ["stop", "length", "tool_calls", "content_filter"]) {
    const r = await runScripted([{ at: 1, text: chatChunk({ content: "a" }, { finish_reason: fr }) + DONE }]);
    assert.equal(r.ok, true, fr);
  }
});
