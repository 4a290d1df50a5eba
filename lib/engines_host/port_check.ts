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
 * Both tests run on EVERY address the client could reach the host by: a name resolves to all of its
 * addresses (`localhost` always to both 127.0.0.1 and ::1, since runtimes differ in which one their
 * fetch tries first), and any one of them in use makes the port busy (a server on [::1] must not be
 * measured in place of an engine that listens on 127.0.0.1).
 * Neither test leaves anything open. The result can of course change right after the check.
 * @module
 */
import { lookup } from "node:dns/promises";
import { createConnection, createServer, isIP } from "node:net";
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

const LOOPBACK_NAMES = new Set(["localhost", "localhost.", "localhost.localdomain", "ip6-localhost"]);

/**
 * Every address a client may connect to for `host`, each with the address the bind test uses:
 * a wildcard host (`0.0.0.0`, `::`, empty) is reached on loopback but bound as the wildcard; a name
 * gives all its resolved addresses, and a loopback name also both 127.0.0.1 and ::1.
 * @param host the engine's host as the manifest gives it
 * @returns the distinct addresses, in a stable order (IPv4 first)
 */
export async function probeAddresses(host: string): Promise<{ connect: string; bind: string }[]> {
  if (host === "" || host === "0.0.0.0") return [{ connect: "127.0.0.1", bind: "0.0.0.0" }];
  if (host === "::") return [{ connect: "::1", bind: "::" }];
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  if (isIP(bare)) return [{ connect: bare, bind: bare }];
  const found: string[] = [];
  try {
    for (const a of await lookup(bare, { all: true, verbatim: true })) found.push(a.address);
  } catch {
    // Unresolvable here: the connect test below reports the error for the name itself.
  }
  if (LOOPBACK_NAMES.has(bare.toLowerCase())) found.push("127.0.0.1", "::1");
  const uniq = [...new Set(found)].sort((a, b) => isIP(a) - isIP(b));
  return uniq.length ? uniq.map((a) => ({ connect: a, bind: a })) : [{ connect: bare, bind: bare }];
}

/** Both tests with their findings (for a cell's record), on every address of `host` ({@link probeAddresses}). */
export async function probePort(
  host: string,
  port: number,
  opts: { timeoutMs?: number } = {},
): Promise<PortProbe> {
  const addrs = await probeAddresses(host);
  const many = addrs.length > 1;
  const connects: string[] = [];
  const binds: string[] = [];
  let inUse = false;
  for (const a of addrs) {
    const c = await connectTest(a.connect, port, opts.timeoutMs ?? PORT_CONNECT_TIMEOUT_MS);
    const b = c === "accepted" ? "skipped: connected" : await bindTest(a.bind, port);
    connects.push(many ? `${a.connect} ${c}` : c);
    binds.push(many ? `${a.bind} ${b}` : b);
    if (c === "accepted" || b === "in_use") {
      inUse = true;
      break; // one busy address is enough; the rest need not be probed
    }
  }
  return { inUse, connect: connects.join(", "), bind: binds.join(", "), holder: inUse ? portHolderText(port) : null };
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
