/**
 * Is a TCP port already taken? Checked before an engine is launched, so a cell refuses with
 * `port_busy` instead of measuring whatever else answers on that port (a leftover engine from an
 * earlier run would otherwise be benchmarked in place of the new one).
 *
 * Two tests, either of which says "in use":
 * - **connect**: a TCP connect to host:port with a short timeout. Accepted means something is
 *   listening, on whatever interface the host resolves to (also works for a remote host).
 * - **bind**: listening on host:port ourselves, closed at once. EADDRINUSE means a socket holds the
 *   port even if it does not accept (a full backlog, a process stopped with SIGSTOP, or a listener on
 *   0.0.0.0 while we connect to 127.0.0.1). Where the address is not local (EADDRNOTAVAIL) or binding
 *   is not allowed (EACCES, ports below 1024), only the connect test counts.
 * Neither test leaves anything open. The result can of course change right after the check.
 * @module
 */
import { createConnection, createServer } from "node:net";
import { portHolderText } from "./proc_table.ts";

/** How long the connect test waits (ms). */
export const PORT_CONNECT_TIMEOUT_MS = 500;

/** What {@link probePort} found. */
export interface PortProbe {
  /** True when either test says the port is taken. */
  inUse: boolean;
  /** "accepted", "refused", "timeout" or "error: CODE". */
  connect: string;
  /** "free", "in_use", or "skipped: CODE" when binding there is not possible. */
  bind: string;
  /**
   * When in use: who holds it, from /proc (`port 8000 is held by pid 1234 (python3 -m vllm ...)`),
   * else null (free, not Linux, or a listener ik may not inspect on a remote host).
   */
  holder?: string | null;
}

function connectTest(host: string, port: number, timeoutMs: number): Promise<string> {
  return new Promise((resolve) => {
    let done = false;
    const sock = createConnection({ host, port });
    const finish = (r: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      sock.removeAllListeners();
      sock.on("error", () => {});
      sock.destroy();
      resolve(r);
    };
    const timer = setTimeout(() => finish("timeout"), timeoutMs);
    sock.once("connect", () => finish("accepted"));
    sock.once("error", (e: Error & { code?: string }) =>
      finish(e.code === "ECONNREFUSED" ? "refused" : `error: ${e.code ?? e.message}`)
    );
  });
}

function bindTest(host: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", (e: Error & { code?: string }) => {
      srv.close(() => {});
      resolve(e.code === "EADDRINUSE" ? "in_use" : `skipped: ${e.code ?? e.message}`);
    });
    srv.listen({ host, port, exclusive: true }, () => {
      srv.close(() => resolve("free"));
    });
  });
}

/** Both tests with their findings (for a cell's record). */
export async function probePort(
  host: string,
  port: number,
  opts: { timeoutMs?: number } = {},
): Promise<PortProbe> {
  const h = host === "0.0.0.0" || host === "" ? "127.0.0.1" : host === "::" ? "::1" : host;
  const connect = await connectTest(h, port, opts.timeoutMs ?? PORT_CONNECT_TIMEOUT_MS);
  if (connect === "accepted") return { inUse: true, connect, bind: "skipped: connected", holder: portHolderText(port) };
  const bind = await bindTest(host === "" ? "0.0.0.0" : host, port);
  return { inUse: bind === "in_use", connect, bind, holder: bind === "in_use" ? portHolderText(port) : null };
}

/**
 * Whether host:port is already in use (see the module notes for the two tests).
 *
 * @example
 * if (await portInUse(engine.host, engine.port)) cell.status = "port_busy";
 */
export async function portInUse(host: string, port: number, opts: { timeoutMs?: number } = {}): Promise<boolean> {
  return (await probePort(host, port, opts)).inUse;
}
