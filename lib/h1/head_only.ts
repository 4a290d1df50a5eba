/**
 * The head of a response whose body a sink took (ik's HTTP/1.1 client, fetch.ts): what the fetch
 * resolves with instead of a Response and a Headers, and the check that a head may go this way.
 * @module
 */
import type { ResponseHead } from "./response_head.ts";
import type { HeadersLike } from "./types.ts";

/**
 * Characters every Response takes as they are in a header value or a reason phrase (tab, printable
 * ASCII, obs-text): a head made only of these needs no Headers object to be checked.
 */
const PLAIN = /^[\t\x20-\x7e\x80-\xff]*$/;

/** Whether a Response and a Headers would take this head as it is (names are tokens already: the parser checked). */
export function plainHead(head: ResponseHead): boolean {
  if (!PLAIN.test(head.reason)) return false;
  for (const f of head.fields) if (!PLAIN.test(f[1])) return false;
  return true;
}

/**
 * A head's fields as one string (`name:value` lines, names lowercased), read as `Headers.get`
 * reads fields: any case of the name, several fields of one name joined with ", ".
 */
export class HeadFields implements HeadersLike {
  readonly #text: string;

  constructor(fields: [string, string][]) {
    let text = "";
    for (const [k, v] of fields) text += `${k.toLowerCase()}:${v}\n`;
    this.#text = text;
  }

  get(name: string): string | null {
    const text = this.#text, key = `${name.toLowerCase()}:`;
    let out: string | null = null;
    for (let at = 0; at < text.length;) {
      const end = text.indexOf("\n", at);
      if (text.startsWith(key, at)) {
        const v = text.slice(at + key.length, end);
        out = out === null ? v : `${out}, ${v}`;
      }
      at = end + 1;
    }
    return out;
  }

  has(name: string): boolean {
    return this.get(name) !== null;
  }
}

/**
 * What the fetch resolves with when a body sink took a 2xx body: the head alone, read as a
 * Response's head is read (`status`, `statusText`, `ok`, `headers.get` and `has`; `body` null).
 * One string of fields instead of a Response and a Headers for every open stream (issue 21: ~0.7 KB a
 * stream, and each KB a stream holds is ~3 MB of peak RSS at 1,000 streams). Only a head that a
 * Response would take as it is comes this way ({@link plainHead}); any other is checked by building one.
 */
export class HeadOnly {
  readonly body = null;
  readonly bodyUsed = false;
  readonly redirected = false;
  readonly status: number;
  readonly statusText: string;
  readonly headers: HeadFields;

  constructor(head: ResponseHead) {
    this.status = head.status;
    this.statusText = head.reason;
    this.headers = new HeadFields(head.fields);
  }

  get ok(): boolean {
    return this.status >= 200 && this.status <= 299;
  }
}
