/** The engine's own clock (llama.cpp `timings`) and the time to first content after reasoning, kept in the result. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { parseEndpoint, streamCompletion } from "../../lib/client/mod.ts";
import { fakeFetch, streamingResponse, transcriptBytes } from "./_replay.ts";

const ep = parseEndpoint("http://127.0.0.1:1");
const enc = new TextEncoder();

test("llama.cpp's timings object is kept as the server's view of the request", async () => {
  const { fetch } = fakeFetch(() => streamingResponse([transcriptBytes("llamacpp/chat-stream.sse")]));
  const r = await streamCompletion(ep, "chat", {}, { fetch });
  assert.equal(r.ok, true);
  assert.equal(typeof r.serverTimings?.prompt_ms, "number");
  assert.equal(typeof r.serverTimings?.predicted_ms, "number");
  assert.equal(r.tFirstContentMs, null, "no reasoning: no time to first output");
});

test("tFirstContentMs: first content after reasoning; null when content came first", async () => {
  const chunk = (delta: Record<string, string>) => `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`;
  const events = [chunk({ reasoning_content: "think" }), chunk({ reasoning_content: " more" }), chunk({ content: "Answer" }), chunk({ content: "!" }), "data: [DONE]\n\n"];
  let t = 0;
  const clock = () => t;
  const { fetch } = fakeFetch(() => streamingResponse(events.map((e) => enc.encode(e)), { beforeChunk: () => void (t += 10) }));
  const r = await streamCompletion(ep, "chat", {}, { fetch, clock });
  assert.equal(r.ok, true);
  assert.equal(r.tFirstMs, 10);
  assert.equal(r.tFirstContentMs, 30);
  const first = [chunk({ content: "A" }), chunk({ reasoning_content: "r" }), chunk({ content: "B" }), "data: [DONE]\n\n"];
  const { fetch: f2 } = fakeFetch(() => streamingResponse(first.map((e) => enc.encode(e))));
  assert.equal((await streamCompletion(ep, "chat", {}, { fetch: f2 })).tFirstContentMs, null);
});
