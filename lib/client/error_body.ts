/**
 * Error bodies from every server personality, reduced to one line. Shapes seen on the wire
 * (../../shared/spec/wire-formats.md): wrapped `{"error":{"message","type","code"}}` (vLLM, llama.cpp,
 * OpenAI), flat `{"object":"error","message",...}` (SGLang, TRT-LLM, older vLLM), a bare string
 * `{"error":"Unauthorized"}` (vLLM's key check, routers), FastAPI's `{"detail": ...}`, plain text,
 * and the HTML page of a proxy (nginx, a load balancer), reduced to its title. Every message is
 * scrubbed (this run's registered secrets and the name rules of ../evidence/scrub.ts) before it is
 * cut to its length: a cut secret would no longer be recognised.
 * @module
 */
import { scrubText } from "../evidence/scrub.ts";

/** The useful parts of an error body. */
export interface ErrorInfo {
  /** Human-readable message (never empty). */
  message: string;
  /** The server's error type ("NotFoundError", "invalid_request_error"), or null. */
  type: string | null;
  /** The server's error code (a number or a string), or null. */
  code: string | number | null;
}

const MAX_MESSAGE = 300;

function oneLine(s: string): string {
  const flat = scrubText(s).replace(/\s+/g, " ").trim();
  return flat.length > MAX_MESSAGE ? flat.slice(0, MAX_MESSAGE - 1) + "…" : flat;
}

function codeOf(v: unknown): string | number | null {
  return typeof v === "string" || typeof v === "number" ? v : null;
}

function fromObject(o: Record<string, unknown>): ErrorInfo | null {
  const type = typeof o.type === "string" && o.type ? o.type : null;
  if (typeof o.message === "string" && o.message) {
    return { message: oneLine(o.message), type, code: codeOf(o.code) };
  }
  if (typeof o.msg === "string" && o.msg) return { message: oneLine(o.msg), type, code: codeOf(o.code) };
  return null;
}

/**
 * Extracts the message from an already-parsed error value (an HTTP body or a mid-stream
 * `data: {"error": ...}` chunk). Returns null when the value has no recognisable message.
 */
export function errorInfoFromJson(value: unknown): ErrorInfo | null {
  if (typeof value === "string") {
    return value.trim() ? { message: oneLine(value), type: null, code: null } : null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  const o = value as Record<string, unknown>;
  const err = o.error;
  if (typeof err === "string" && err.trim()) {
    return { message: oneLine(err), type: null, code: codeOf(o.code) };
  }
  if (err !== null && typeof err === "object" && !Array.isArray(err)) {
    const inner = fromObject(err as Record<string, unknown>);
    if (inner) return inner;
  }
  const flat = fromObject(o);
  if (flat) return flat;
  const detail = o.detail;
  if (typeof detail === "string" && detail.trim()) {
    return { message: oneLine(detail), type: null, code: null };
  }
  if (detail !== null && typeof detail === "object" && !Array.isArray(detail)) {
    const inner = errorInfoFromJson(detail);
    if (inner) return inner;
  }
  if (Array.isArray(detail) && detail.length > 0) {
    const parts = detail.map((d) =>
      (d && typeof d === "object" && typeof (d as { msg?: unknown }).msg === "string")
        ? (d as { msg: string }).msg
        : JSON.stringify(d)
    );
    return { message: oneLine(parts.join("; ")), type: null, code: null };
  }
  return null;
}

/**
 * Reads an HTTP error body of any known shape.
 * @param text the body as text (may be empty, JSON or plain text)
 * @param status the HTTP status, used when the body says nothing
 */
export function parseErrorBody(text: string, status = 0): ErrorInfo {
  const trimmed = text.trim();
  if (trimmed) {
    if (trimmed[0] === "{" || trimmed[0] === '"') {
      try {
        const info = errorInfoFromJson(JSON.parse(trimmed));
        if (info) return info;
      } catch {
        // not JSON after all: fall through to plain text
      }
    }
    if (trimmed[0] === "<") {
      const html = htmlText(trimmed);
      if (html) return { message: html, type: null, code: null };
    }
    return { message: oneLine(trimmed), type: null, code: null };
  }
  return {
    message: status ? `HTTP ${status} with an empty body` : "empty error body",
    type: null,
    code: null,
  };
}

/** Formats an error for a request row: `HTTP 404: The model x does not exist. (NotFoundError)`. */
export function formatHttpError(status: number, info: ErrorInfo): string {
  const type = info.type && !info.message.includes(info.type) ? ` (${info.type})` : "";
  return `HTTP ${status}: ${info.message}${type}`;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'", nbsp: " " };

/** The readable part of an HTML error page: its title (or first heading), else its text. */
function htmlText(html: string): string | null {
  if (!/^<(!doctype|html|head|body|title|h1|center|p|div)\b/i.test(html)) return null;
  const decode = (t: string) =>
    oneLine(t.replace(/<[^>]*>/g, " ").replace(/&(\w+|#39);/g, (m, e) => ENTITIES[e] ?? m));
  const title = /<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1];
  if (title && decode(title)) return decode(title);
  const h1 = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(html)?.[1];
  if (h1 && decode(h1)) return decode(h1);
  const body = decode(html.replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, " "));
  return body || null;
}

/**
 * A `Retry-After` header as a note to append to an HTTP error (`" (retry after 5 s)"`), or "".
 * @param value the header value: seconds or an HTTP date
 */
export function retryAfterNote(value: string | null): string {
  const v = value?.trim();
  if (!v) return "";
  return /^\d+$/.test(v) ? ` (retry after ${v} s)` : ` (retry after ${oneLine(v)})`;
}

/**
 * What a 2xx body that held no SSE event was instead, in one line, or null when it was empty:
 * an error object (routers that answer errors with 200), a whole non-streamed completion (the
 * server ignored `stream: true`), an HTML page, or the start of the text.
 * @param text the start of the body
 */
export function describeNonSseBody(text: string): string | null {
  const trimmed = text.trim();
  if (!trimmed) return null;
  if (trimmed[0] === "{") {
    try {
      const v = JSON.parse(trimmed) as Record<string, unknown> | null;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) {
        if (Array.isArray(v.choices)) {
          return `a whole ${typeof v.object === "string" ? v.object : "completion"} object, not a stream ` +
            "(the server ignored stream: true)";
        }
        const info = errorInfoFromJson(v);
        if (info) {
          return `the body is an error: ${info.message}${
            info.type && !info.message.includes(info.type) ? ` (${info.type})` : ""
          }`;
        }
      }
    } catch {
      // cut off or not JSON: show its start below
    }
  }
  const info = parseErrorBody(trimmed);
  return `body '${info.message.length > 120 ? info.message.slice(0, 119) + "…" : info.message}'`;
}
