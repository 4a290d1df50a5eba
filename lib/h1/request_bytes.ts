/**
 * A request as ik's HTTP/1.1 client puts it on the wire: the target a URL names (plain http only;
 * anything else is left to the fallback fetch), the header lines validated as fetch validates them,
 * and the head and body in one buffer.
 * @module
 */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[\r\n\0]/;
const encoder = new TextEncoder();

/** Where a request goes: the pool key, the socket address, the Host header and the request target. */
export interface Target {
  key: string;
  host: string;
  port: number;
  hostHeader: string;
  path: string;
}

const targets = new Map<string, Target | null>();

/** The request target of a URL this client can send, or null (left to the fallback). */
export function targetOf(input: string): Target | null {
  let t = targets.get(input);
  if (t === undefined) {
    t = null;
    let u: URL | null = null;
    try {
      u = new URL(input);
    } catch {
      u = null;
    }
    if (u !== null && u.protocol === "http:" && !u.username && !u.password) {
      const port = u.port ? Number(u.port) : 80;
      const host = u.hostname.replace(/^\[|\]$/g, "");
      t = { key: `${host}:${port}`, host, port, hostHeader: u.host, path: (u.pathname || "/") + u.search };
    }
    if (targets.size > 256) targets.clear();
    targets.set(input, t);
  }
  return t;
}

/** The header lines of an init, validated as fetch does (a CR or LF in a value is refused). */
function headerLines(h: HeadersInit | undefined, t: Target, bodyLength: number | null): string {
  const lines: string[] = [];
  let host: string | null = null;
  const add = (name: string, value: string) => {
    if (!TOKEN.test(name)) throw new TypeError(`invalid header name '${name.slice(0, 40)}'`);
    const v = String(value).trim();
    if (BAD_VALUE.test(v)) throw new TypeError(`invalid value of header '${name}' (a line break or NUL)`);
    const lower = name.toLowerCase();
    if (lower === "content-length" || lower === "transfer-encoding" || lower === "connection") return; // this client frames the request
    if (lower === "host") host = v;
    else lines.push(`${name}: ${v}\r\n`);
  };
  if (h instanceof Headers) h.forEach((v, k) => add(k, v));
  else if (Array.isArray(h)) for (const [k, v] of h) add(k, v);
  else if (h) for (const k of Object.keys(h)) add(k, (h as Record<string, string>)[k]);
  let head = `host: ${host ?? t.hostHeader}\r\n` + lines.join("");
  if (bodyLength !== null) head += `content-length: ${bodyLength}\r\n`;
  return head;
}

/** Only 7-bit characters: each one byte in UTF-8 (control characters included: JSON escapes them anyway). */
// deno-lint-ignore no-control-regex
const ASCII = /^[\x00-\x7f]*$/;

/** The request's bytes: head and body in one buffer (one write, one segment on the wire). */
export function requestBytes(method: string, t: Target, headers: HeadersInit | undefined, body: string | Uint8Array | null): Uint8Array {
  if (typeof body === "string" && body.length > 0 && ASCII.test(body)) {
    // A JSON body is ASCII almost always: its length is its byte count, so the head and the body
    // are encoded straight into one buffer (not a buffer for each and a third for both: ~2 KB of
    // garbage a request at a 1.5 KB body, at thousands of requests a second).
    const head = `${method} ${t.path} HTTP/1.1\r\n${headerLines(headers, t, body.length)}\r\n`;
    if (ASCII.test(head)) {
      const all = new Uint8Array(head.length + body.length);
      encoder.encodeInto(head, all);
      encoder.encodeInto(body, all.subarray(head.length));
      return all;
    }
  }
  const payload = typeof body === "string" ? encoder.encode(body) : body;
  const needsLength = payload !== null || method === "POST" || method === "PUT" || method === "PATCH";
  const head = encoder.encode(`${method} ${t.path} HTTP/1.1\r\n${headerLines(headers, t, needsLength ? (payload?.length ?? 0) : null)}\r\n`);
  if (payload === null || payload.length === 0) return head;
  const all = new Uint8Array(head.length + payload.length);
  all.set(head, 0);
  all.set(payload, head.length);
  return all;
}
