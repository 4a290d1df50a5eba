/**
 * Which HTTP client measures: ik's raw HTTP/1.1 client (lib/h1) by default where the runtime
 * gives it a transport, the runtime's fetch where that client would not do what the user's
 * environment asks (an HTTP proxy: fetch honours `http_proxy`) or when `IK_HTTP_CLIENT=fetch`
 * says so. https URLs always go to fetch (lib/h1 speaks plain HTTP/1.1 only).
 * @module
 */

/** The env var that picks the measured requests' HTTP client: `h1` (default) or `fetch`. */
export const HTTP_CLIENT_ENV = "IK_HTTP_CLIENT";

/** "h1" or "fetch", from the environment. */
export function measuredFetchChoice(env: Record<string, string | undefined>): "h1" | "fetch" {
  const asked = (env[HTTP_CLIENT_ENV] ?? "").trim().toLowerCase();
  if (asked === "fetch") return "fetch";
  const proxied = ["http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"].some((k) => (env[k] ?? "").trim() !== "");
  return proxied ? "fetch" : "h1";
}

/** Why the value of {@link HTTP_CLIENT_ENV} is unusable, or null when it is fine (unset, `h1`, `fetch`). */
export function httpClientEnvProblem(env: Record<string, string | undefined>): string | null {
  const v = env[HTTP_CLIENT_ENV];
  if (v === undefined || ["", "h1", "fetch"].includes(v.trim().toLowerCase())) return null;
  return `unknown HTTP client '${v.slice(0, 40)}'`;
}
