/** Free loopback TCP ports for tests that must name a port before something listens on it. */
import { createServer, type Server } from "node:net";

/** `n` distinct ports that were free a moment ago on 127.0.0.1 (all held open together, then released). */
export async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  const ports: number[] = [];
  for (let i = 0; i < n; i++) {
    const s = createServer();
    await new Promise<void>((ok) => s.listen(0, "127.0.0.1", ok));
    servers.push(s);
    ports.push((s.address() as { port: number }).port);
  }
  await Promise.all(servers.map((s) => new Promise((ok) => s.close(ok))));
  return ports;
}

/** One port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  return (await freePorts(1))[0];
}
