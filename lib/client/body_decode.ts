/**
 * A response body as ik reads it: decompressed when the server compressed it although the request
 * asked for `identity` (and the runtime left it so), and read with a byte limit for error bodies.
 * A decoder error is a {@link BodyDecodeError} (the bytes arrived but were not valid), a failed
 * read of the wire is the read's own error, so the two end as `protocol` and `network`.
 * @module
 */

/** A body the client could not decompress (the bytes arrived; they were not valid gzip/deflate). */
export class BodyDecodeError extends Error {
  constructor(readonly format: string, readonly inner: unknown) {
    super(`corrupt ${format} body`);
  }
}

/**
 * The compression ik decodes that a response's content-encoding names (gzip, x-gzip, deflate), or
 * null: no content-encoding, identity, or one ik passes through as it came.
 */
export function compressionOf(headers: Pick<Headers, "get">): "gzip" | "deflate" | null {
  const ce = headers.get("content-encoding")?.trim().toLowerCase();
  return ce === "gzip" || ce === "x-gzip" ? "gzip" : ce === "deflate" ? "deflate" : null;
}

/**
 * The body, decompressed when the server compressed it although the request asked for
 * `identity` and the runtime left it compressed (Deno does not decode when the caller set
 * Accept-Encoding; Bun does not when asked `decompress: false`). Decided once per response from
 * the header and the first bytes' magic, so a body a runtime (or an injected fetch) already
 * decoded is passed through untouched. A decoder error surfaces as {@link BodyDecodeError}, a
 * failed read of the wire as itself, so the two end as `protocol` and `network`.
 */
export function decodedBody(body: ReadableStream<Uint8Array>, headers: Headers): ReadableStream<Uint8Array> {
  const format = compressionOf(headers);
  if (format === null) return body;
  const src = body.getReader();
  let first: Uint8Array | null = null;
  // Set when reading the wire failed, so a decoder error can be told from a network one.
  let srcFailed = false;
  const raw = new ReadableStream<Uint8Array>({
    async pull(ctrl) {
      if (first !== null) {
        ctrl.enqueue(first);
        first = null;
        return;
      }
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await src.read();
      } catch (e) {
        srcFailed = true;
        throw e;
      }
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    cancel(reason) {
      return src.cancel(reason);
    },
  }, { highWaterMark: 0 });
  // Peek at the first non-empty read to see whether it is still compressed.
  let inner: ReadableStreamDefaultReader<Uint8Array> | null = null;
  let compressed = false;
  return new ReadableStream<Uint8Array>({
    async start(ctrl) {
      let r = await src.read();
      while (!r.done && r.value.length === 0) r = await src.read();
      if (r.done) {
        ctrl.close();
        return;
      }
      const b = r.value;
      first = b;
      compressed = format === "gzip"
        ? b[0] === 0x1f && (b.length < 2 || b[1] === 0x8b)
        : (b[0] & 0x0f) === 8 && (b.length < 2 || ((b[0] << 8) | b[1]) % 31 === 0);
      const decoded = compressed
        ? raw.pipeThrough(
          new DecompressionStream(format) as unknown as TransformStream<Uint8Array, Uint8Array>,
        )
        : raw;
      inner = decoded.getReader();
    },
    async pull(ctrl) {
      if (inner === null) return;
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await inner.read();
      } catch (e) {
        throw compressed && !srcFailed ? new BodyDecodeError(format, e) : e;
      }
      if (r.done) ctrl.close();
      else ctrl.enqueue(r.value);
    },
    cancel(reason) {
      return inner !== null ? inner.cancel(reason) : src.cancel(reason);
    },
  }, { highWaterMark: 0 });
}

/** Reads at most `limit` bytes of a body as text, then drops the rest. */
export async function readLimited(res: Response, limit: number, onBytes: () => void): Promise<string> {
  if (res.body === null) return "";
  const reader = decodedBody(res.body, res.headers).getReader();
  const dec = new TextDecoder();
  let text = "";
  let n = 0;
  try {
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      onBytes();
      if (n < limit) text += dec.decode(r.value.subarray(0, limit - n), { stream: true });
      n += r.value.length;
    }
  } finally {
    reader.releaseLock();
  }
  return text + dec.decode();
}

