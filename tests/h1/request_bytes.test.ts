/** A request on the wire: head and body in one buffer, the content-length in bytes, whatever the body's characters. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { requestBytes, targetOf } from "../../lib/h1/request_bytes.ts";

const t = targetOf("http://127.0.0.1:8000/v1/chat/completions?x=1")!;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

test("an ASCII JSON body: the head and the body, content-length its length, in one buffer of exactly their size", () => {
  const body = JSON.stringify({ model: "m", messages: [{ role: "user", content: "hello" }], stream: true });
  const b = requestBytes("POST", t, { "content-type": "application/json", accept: "text/event-stream" }, body);
  assert.equal(text(b), `POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\ncontent-type: application/json\r\naccept: text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
  assert.equal(b.byteOffset, 0);
  assert.equal(b.buffer.byteLength, b.length, "no spare bytes behind the request");
});

test("a body with other characters counts its UTF-8 bytes; so does an ASCII body under a header value that is not", () => {
  const body = JSON.stringify({ content: "naïve café 日本語 🙂" });
  const bytes = new TextEncoder().encode(body).length;
  assert.ok(bytes > body.length);
  const b = requestBytes("POST", t, { "content-type": "application/json" }, body);
  assert.equal(text(b), `POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\ncontent-type: application/json\r\ncontent-length: ${bytes}\r\n\r\n${body}`);
  const h = requestBytes("POST", t, { "x-note": "café" }, "{}");
  assert.equal(text(h), `POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\nx-note: café\r\ncontent-length: 2\r\n\r\n{}`);
});

test("bytes, an empty body and none: POST says content-length 0, GET says nothing", () => {
  assert.equal(text(requestBytes("POST", t, {}, new TextEncoder().encode("ab"))), "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\ncontent-length: 2\r\n\r\nab");
  assert.equal(text(requestBytes("POST", t, {}, "")), "POST /v1/chat/completions?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8000\r\ncontent-length: 0\r\n\r\n");
  assert.equal(text(requestBytes("GET", t, { Host: "example" }, null)), "GET /v1/chat/completions?x=1 HTTP/1.1\r\nhost: example\r\n\r\n");
  assert.throws(() => requestBytes("POST", t, { "x-bad": "a\r\nb" }, "{}"), /line break/);
});
