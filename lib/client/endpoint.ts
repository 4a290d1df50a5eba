/**
 * The server address: `--base-url` with or without a trailing `/v1` (and slash) names the same
 * server; so does one pasted with the route (`…/v1/chat/completions`), with a note saying so. A
 * URL ik cannot use is a usage error (exit 64) that says what to write instead, and every message
 * shows the URL redacted (no userinfo, no secret query values).
 * @module
 */
import { usageError } from "../cli/errors.ts";
import { redactUrl } from "../evidence/redact.ts";
import type { Api } from "./types.ts";

/** A parsed, normalised server address. */
export interface Endpoint {
  /** "http" or "https". */
  scheme: "http" | "https";
  /** Host name or address as written (IPv6 in brackets). */
  host: string;
  /** Port, the scheme's default when none was written. */
  port: number;
  /** Path before `/v1` ("" for a server at the root, "/proxy" behind a path prefix). */
  prefix: string;
  /** `scheme://host:port` exactly as fetch needs it. */
  origin: string;
  /** The OpenAI API root, always ending in `/v1` without a slash. */
  baseUrl: string;
  /** Lower-cased `scheme://host:port/prefix`: one spelling per server (for keyed hashes). */
  canonical: string;
  /**
   * Set when the URL was accepted with a correction the user should see (it named an API route:
   * `--base-url ends in /v1/chat/completions: using http://h:8000 as the server root`); callers
   * print it on stderr. Absent otherwise.
   */
  note?: string;
}

/** API routes a pasted URL may end in; they are cut off to find the server root. */
const ROUTE_SUFFIX = /\/v1\/(chat\/completions|completions)$/i;

const API_PATHS: Record<Api, string> = { chat: "/chat/completions", completions: "/completions" };

/**
 * Parses `--base-url`. Accepts `http://h:8000`, `http://h:8000/`, `http://h:8000/v1`, `http://h:8000/v1/`,
 * path prefixes (`https://h/proxy/v1`), and a URL ending in `/v1/chat/completions` or
 * `/v1/completions` (optionally with a slash), which comes back with a `note`.
 * @param raw the text the user gave
 * @param flag the flag to name in the error
 * @throws IkError (usage, 64) when the URL is not usable
 */
export function parseEndpoint(raw: string, flag = "--base-url"): Endpoint {
  const text = raw.trim();
  const shown = redactUrl(raw);
  const hint = "give the server root, e.g. http://127.0.0.1:8000 (a trailing /v1 is fine)";
  if (!/^https?:\/\//i.test(text)) {
    throw usageError(flag, `'${shown}' is not an http:// or https:// URL`, hint);
  }
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw usageError(flag, `'${shown}' is not a valid URL`, hint);
  }
  if (!u.hostname) throw usageError(flag, `'${shown}' has no host`, hint);
  if (u.username || u.password) {
    throw usageError(flag, "credentials in the URL are not accepted", "pass the key with --api-key-env NAME");
  }
  if (u.search || u.hash || text.includes("?") || text.includes("#")) {
    throw usageError(flag, `'${shown}' has a query or fragment`, hint);
  }
  const scheme = u.protocol === "https:" ? "https" : "http";
  const port = u.port ? Number(u.port) : scheme === "https" ? 443 : 80;
  let path = u.pathname.replace(/\/+$/, "");
  const route = ROUTE_SUFFIX.exec(path);
  if (route) path = path.slice(0, route.index + 3);
  if (/\/v1$/i.test(path)) path = path.slice(0, -3);
  path = path.replace(/\/+$/, "");
  const host = u.hostname;
  const origin = `${scheme}://${host}:${port}`;
  const ep: Endpoint = {
    scheme,
    host,
    port,
    prefix: path,
    origin,
    baseUrl: `${origin}${path}/v1`,
    canonical: `${scheme}://${host.toLowerCase()}:${port}${path}`,
  };
  if (route) ep.note = `${flag} ends in ${route[0]}: using ${origin}${path} as the server root`;
  return ep;
}

/** The full URL of an API route (`chat` → `.../v1/chat/completions`). */
export function apiUrl(ep: Endpoint, api: Api): string {
  return ep.baseUrl + API_PATHS[api];
}

/** The full URL of a path under `/v1` (`"/models"` → `.../v1/models`). */
export function v1Url(ep: Endpoint, path: string): string {
  return ep.baseUrl + (path.startsWith("/") ? path : "/" + path);
}

/** The full URL of a path at the server root, outside `/v1` (`"/health"`, `"/metrics"`). */
export function rootUrl(ep: Endpoint, path: string): string {
  return ep.origin + ep.prefix + (path.startsWith("/") ? path : "/" + path);
}

/** Whether the host is this machine (loopback), e.g. to decide if a local GPU describes the server. */
export function isLoopback(ep: Endpoint): boolean {
  const h = ep.host.toLowerCase();
  return h === "localhost" || h === "[::1]" || h === "::1" || /^127\.\d+\.\d+\.\d+$/.test(h);
}
