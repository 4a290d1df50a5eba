/**
 * An HTTP/1.1 response head: its parsed form, the framing of the body it announces (RFC 9112
 * §6.3) and whether the connection persists after it (§9.3).
 * @module
 */
import { H1ProtocolError } from "./response_error.ts";

/** A parsed response head. */
export interface ResponseHead {
  /** 0 for HTTP/1.0, 1 for HTTP/1.1. */
  minor: 0 | 1;
  status: number;
  reason: string;
  /** Header fields in arrival order, names as sent. */
  fields: [string, string][];
}

/** How a response's body is delimited. */
export type Framing = "none" | "length" | "chunked" | "close";

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const STATUS_LINE = /^HTTP\/1\.([01]) (\d{3})(?: (.*))?$/;

/** Bytes as a latin1 string (each byte one char: header values are byte strings). */
export function latin1(b: Uint8Array): string {
  let s = "";
  for (let i = 0; i < b.length; i += 8192) s += String.fromCharCode.apply(null, b.subarray(i, i + 8192) as unknown as number[]);
  return s;
}

/** Parses a head's text (without its blank line). */
export function parseHead(text: string): ResponseHead {
  const lines = text.split("\n");
  const first = lines[0].endsWith("\r") ? lines[0].slice(0, -1) : lines[0];
  const m = STATUS_LINE.exec(first);
  if (!m) throw new H1ProtocolError(`malformed status line '${first.slice(0, 60)}' (not an HTTP/1.x response)`);
  const fields: [string, string][] = [];
  for (let k = 1; k < lines.length; k++) {
    let l = lines[k];
    if (l.endsWith("\r")) l = l.slice(0, -1);
    if (l === "") continue;
    if ((l[0] === " " || l[0] === "\t") && fields.length) {
      // obs-fold: a continuation of the previous field's value.
      fields[fields.length - 1][1] += " " + l.trim();
      continue;
    }
    const colon = l.indexOf(":");
    const name = colon > 0 ? l.slice(0, colon) : "";
    if (!TOKEN.test(name)) throw new H1ProtocolError(`malformed header line '${l.slice(0, 60)}'`);
    fields.push([name, l.slice(colon + 1).trim()]);
  }
  return { minor: m[1] === "0" ? 0 : 1, status: Number(m[2]), reason: m[3] ?? "", fields };
}

/** All values of a field (case-insensitive name), comma lists split. */
function values(head: ResponseHead, name: string): string[] {
  const out: string[] = [];
  for (const [k, v] of head.fields) {
    if (k.length === name.length && k.toLowerCase() === name) for (const p of v.split(",")) if (p.trim() !== "") out.push(p.trim());
  }
  return out;
}

/** The content-length, or null when absent. Throws for a malformed one or two that differ. */
export function contentLength(head: ResponseHead): string | null {
  const all = values(head, "content-length");
  if (all.length === 0) return null;
  for (const v of all) if (!/^\d{1,15}$/.test(v)) throw new H1ProtocolError(`malformed content-length '${v.slice(0, 40)}'`);
  if (all.some((v) => Number(v) !== Number(all[0]))) throw new H1ProtocolError(`conflicting content-length values (${all.slice(0, 4).join(", ")})`);
  return all[0];
}

/** How the body of `head` is delimited (RFC 9112 §6.3). */
export function framingOf(head: ResponseHead, isHeadRequest: boolean): Framing {
  // 205 Reset Content has no content either (RFC 9110 §15.3.6).
  if (isHeadRequest || head.status === 204 || head.status === 205 || head.status === 304) return "none";
  const te = values(head, "transfer-encoding");
  if (te.length) return te[te.length - 1].toLowerCase() === "chunked" ? "chunked" : "close";
  return contentLength(head) === null ? "close" : "length";
}

/** Whether the connection may carry another request after this response (HTTP/1.1 persistence). */
export function keepsAlive(head: ResponseHead, framing: Framing): boolean {
  if (framing === "close") return false;
  const conn = values(head, "connection").map((v) => v.toLowerCase());
  if (conn.includes("close")) return false;
  if (head.minor === 0) return conn.includes("keep-alive");
  // Both a transfer-encoding and a content-length: a smuggling shape; do not reuse.
  return !(values(head, "transfer-encoding").length && values(head, "content-length").length);
}
