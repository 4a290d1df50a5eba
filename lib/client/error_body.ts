/**
 * Error bodies from every server personality, reduced to one line. Shapes seen on the wire
 * (../../shared/spec/wire-formats.md): wrapped `{"error":{"message","type","code"}}` (vLLM, llama.cpp,
 * OpenAI), flat `{"object":"error","message",...}` (SGLang, TRT-LLM, older vLLM), a bare string
 * `{"error":"Unauthorized"}` (vLLM's key check, routers), FastAPI's `{"detail": ...}`, and plain text.
 * @module
 */

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
  const flat = s.replace(/\s+/g, " ").trim();
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
