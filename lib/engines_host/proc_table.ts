/**
 * What Linux's /proc says about processes and listening sockets, read with node:fs: the process
 * table (ppid, process group, session, state, start time), the descendants of a set of pids, and
 * who holds a TCP port in LISTEN (/proc/net/tcp{,6} → socket inode → /proc/<pid>/fd). Used to stop
 * every descendant of an engine and to name the process still on a port. Without /proc (macOS)
 * everything reads as empty. Only processes ik may inspect (its own user's) can be named.
 * @module
 */
import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/** One process, from /proc/<pid>/stat. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  pgid: number;
  sid: number;
  /** R, S, D, Z, T, ... */
  state: string;
  /** Start time in clock ticks after boot (field 22): with the pid, a process's identity. */
  start: number;
  comm: string;
}

/** Reads /proc/<pid>/stat, or null when the process is gone (or there is no /proc). */
export function procInfo(pid: number): ProcInfo | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  } catch {
    return null;
  }
  // pid (comm) state ppid pgrp session ...; comm may hold spaces and parentheses.
  const close = stat.lastIndexOf(")");
  const rest = stat.slice(close + 2).split(" ");
  return {
    pid,
    comm: stat.slice(stat.indexOf("(") + 1, close),
    state: rest[0],
    ppid: Number(rest[1]),
    pgid: Number(rest[2]),
    sid: Number(rest[3]),
    start: Number(rest[19]),
  };
}

/** Every process /proc lists (empty without /proc). */
export function processTable(): ProcInfo[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcInfo[] = [];
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    const p = procInfo(Number(n));
    if (p) out.push(p);
  }
  return out;
}

/** The pids below `roots` in the ppid tree (roots excluded), from one table. */
export function descendantsOf(roots: Iterable<number>, table: readonly ProcInfo[]): number[] {
  const kids = new Map<number, number[]>();
  for (const p of table) {
    const l = kids.get(p.ppid) ?? [];
    l.push(p.pid);
    kids.set(p.ppid, l);
  }
  const out: number[] = [];
  const seen = new Set<number>(roots);
  const stack = [...seen];
  while (stack.length) {
    for (const c of kids.get(stack.pop()!) ?? []) {
      if (seen.has(c)) continue;
      seen.add(c);
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

/** A process's command line, spaces between the arguments, cut to `max` characters ("" when unreadable). */
export function commandLineOf(pid: number, max = 100): string {
  try {
    const raw = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0+$/, "").split("\0").join(" ");
    const line = raw || `[${procInfo(pid)?.comm ?? "?"}]`;
    return line.length > max ? line.slice(0, max - 3) + "..." : line;
  } catch {
    return "";
  }
}

/** `pid 1234 (python3 -m vllm.entrypoints...)`, for messages. */
export function describePid(pid: number): string {
  const cmd = commandLineOf(pid);
  return cmd ? `pid ${pid} (${cmd})` : `pid ${pid}`;
}

/** Inodes of the TCP sockets in LISTEN on `port` (any address, IPv4 and IPv6). */
export function listeningInodes(port: number): Set<number> {
  const out = new Set<number>();
  for (const f of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    let text: string;
    try {
      text = readFileSync(f, "latin1");
    } catch {
      continue;
    }
    for (const line of text.split("\n").slice(1)) {
      // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
      const c = line.trim().split(/\s+/);
      if (c.length < 10 || c[3] !== "0A") continue;
      const local = c[1];
      if (parseInt(local.slice(local.lastIndexOf(":") + 1), 16) !== port) continue;
      const inode = Number(c[9]);
      if (inode > 0) out.add(inode);
    }
  }
  return out;
}

/**
 * The pids holding a LISTEN socket on `port` (several when a socket is shared, as after a fork).
 * Processes whose fds ik may not read (another user's) cannot be found: then the list is empty
 * though the port is taken.
 */
export function portHolders(port: number): number[] {
  const inodes = listeningInodes(port);
  if (inodes.size === 0) return [];
  const want = new Set([...inodes].map((i) => `socket:[${i}]`));
  const out: number[] = [];
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  for (const n of names) {
    if (!/^\d+$/.test(n)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${n}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${n}/fd/${fd}`);
      } catch {
        continue;
      }
      if (want.has(link)) {
        out.push(Number(n));
        break;
      }
    }
  }
  return out;
}

/**
 * One phrase naming who listens on `port`: `port 8000 is held by pid 1234 (python3 -m vllm ...)`,
 * or null when no LISTEN socket there is visible (free, or held by a process of another user).
 */
export function portHolderText(port: number): string | null {
  const pids = portHolders(port);
  if (pids.length === 0) return listeningInodes(port).size ? `port ${port} is held by a process ik may not inspect (another user's)` : null;
  const shown = pids.slice(0, 3).map(describePid).join(", ");
  return `port ${port} is held by ${shown}${pids.length > 3 ? ` and ${pids.length - 3} more` : ""}`;
}
