/**
 * The mock's request-body read (lib/mock/body.ts): a body whose length is declared within the limit
 * is read whole, never through a reader on its stream (in Bun a reader takes a 64–256 KB buffer a
 * read: at thousands of requests a second, most of the mock's collections); a body of no declared
 * length is still counted as it streams in; a declared length over the limit is refused unread.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readBody } from "../../lib/mock/body.ts";

/** A request stand-in whose stream refuses a reader: only a whole read can take its body. */
function noReaderRequest(text: string, length: string | null): { req: Request; reads: () => number } {
  const bytes = new TextEncoder().encode(text);
  let whole = 0;
  const headers = new Headers(length === null ? {} : { "content-length": length });
  const body = {
    getReader() {
      throw new Error("a reader was taken on a body of declared length");
    },
    cancel: () => Promise.resolve(),
  };
  const req = {
    headers,
    body,
    arrayBuffer: () => {
      whole++;
      return Promise.resolve(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    },
  } as unknown as Request;
  return { req, reads: () => whole };
}

describe("mock request body", () => {
  it("a declared length within the limit: read whole, the exact UTF-8 text", async () => {
    const text = JSON.stringify({ messages: [{ role: "user", content: "naïve 日本 \u{1F600} café" }] });
    const { req, reads } = noReaderRequest(text, String(new TextEncoder().encode(text).length));
    assert.deepEqual(await readBody(req), { ok: true, text });
    assert.equal(reads(), 1);
  });

  it("the same through a real Request, and an empty declared body", async () => {
    const text = '{"prompt":"ünïcödé ✓"}';
    const r = new Request("http://mock/v1/completions", { method: "POST", body: text, headers: { "content-type": "application/json" } });
    assert.deepEqual(await readBody(r), { ok: true, text });
    const empty = new Request("http://mock/v1/completions", { method: "POST", body: "", headers: { "content-length": "0" } });
    assert.deepEqual(await readBody(empty), { ok: true, text: "" });
  });

  it("a declared length under a body that is longer (a Request built by hand): the limit holds on what was read", async () => {
    const { req, reads } = noReaderRequest("x".repeat(20), "5");
    assert.deepEqual(await readBody(req, 10), { ok: false, tooLarge: true });
    assert.equal(reads(), 1);
  });

  it("a declared length over the limit is refused before a byte is read", async () => {
    const { req, reads } = noReaderRequest("x".repeat(20), "20");
    assert.deepEqual(await readBody(req, 10), { ok: false, tooLarge: true });
    assert.equal(reads(), 0);
  });

  it("no declared length (chunked): counted as it streams, refused just past the limit", async () => {
    const chunks = ["0123456789", "0123456789", "0123456789"];
    let pulled = 0;
    const stream = () =>
      new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled >= chunks.length) return c.close();
          c.enqueue(new TextEncoder().encode(chunks[pulled++]));
        },
      });
    const streamed = (s: ReadableStream<Uint8Array>) => ({ headers: new Headers(), body: s, arrayBuffer: () => Promise.reject(new Error("read whole")) }) as unknown as Request;
    assert.deepEqual(await readBody(streamed(stream())), { ok: true, text: chunks.join("") });
    pulled = 0;
    assert.deepEqual(await readBody(streamed(stream()), 15), { ok: false, tooLarge: true });
    assert.equal(pulled, 2, "read no further than the chunk that passed the limit");
  });
});
