/**
 * A response body read as text up to a byte cap: past it the rest is not read (the stream is
 * cancelled) and the result says it was cut. The one bounded read behind `/v1/models`, engine
 * detection and metrics scrapes, so a hostile or broken server cannot make ik hold more.
 * @module
 */

/** The text read and whether the body went past `maxBytes` (then `text` holds the first chunks only). */
export async function readCappedText(res: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!res.body) return { text: "", truncated: false };
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  let text = "";
  let n = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { text: text + dec.decode(), truncated: false };
    n += value.byteLength;
    text += dec.decode(value, { stream: true });
    if (n > maxBytes) {
      await reader.cancel().catch(() => {});
      return { text, truncated: true };
    }
  }
}
