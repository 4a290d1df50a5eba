/**
 * The HTTP/1.1 client's keep-alive pool: idle connections per host, newest first out, and every
 * connection open (in use or idle).
 * @module
 */

/** Idle connections kept per host (a closed loop of N streams reuses N). */
const MAX_IDLE_PER_HOST = 4096;

/** What the pool needs of a connection. */
export interface Pooled {
  /** The connection can carry nothing more. */
  readonly dead: boolean;
  /** Its transport, or null once closed. */
  readonly t: { setRef(ref: boolean): void; resume(): void } | null;
  /** The host it goes to (`target.key`: host and port). */
  readonly target: { key: string };
  /** Its parser, reset before the connection is reused. */
  readonly parser: { reset(): void };
  keep: boolean;
  paused: boolean;
  /** Closes it now. */
  destroy(): void;
}

/** Idle connections per host, newest first out. */
export class Pool<C extends Pooled> {
  private idle = new Map<string, C[]>();
  /** Every open connection (in use or idle). */
  readonly all = new Set<C>();

  /** An idle live connection to `key` (the newest), taken out of the pool, or null. */
  take(key: string): C | null {
    const list = this.idle.get(key);
    while (list && list.length) {
      const c = list.pop() as C;
      if (!c.dead && c.t !== null) return c;
    }
    return null;
  }

  /** A connection whose response was read whole goes back (reset, unref'd, reading again), unless the host has enough idle. */
  release(c: C): void {
    c.parser.reset();
    c.keep = false;
    let list = this.idle.get(c.target.key);
    if (!list) this.idle.set(c.target.key, list = []);
    if (list.length >= MAX_IDLE_PER_HOST) {
      c.destroy();
      return;
    }
    c.t?.setRef(false);
    list.push(c);
    if (c.paused) {
      // Paused while the last body's chunks waited for their reader: the next response must be read.
      // (In the pool first: bytes an idle connection gets now destroy it, and it leaves the pool.)
      c.paused = false;
      c.t?.resume();
    }
  }

  /** A closed connection leaves the pool. */
  forget(c: C): void {
    const list = this.idle.get(c.target.key);
    if (list) {
      const i = list.indexOf(c);
      if (i >= 0) list.splice(i, 1);
    }
    this.all.delete(c);
  }

  /** Closes every idle connection. */
  closeIdle(): void {
    for (const list of this.idle.values()) for (const c of list.splice(0)) c.destroy();
  }

  /** Connections open now: in use and idle. */
  counts(): { busy: number; idle: number } {
    let idle = 0;
    for (const list of this.idle.values()) idle += list.length;
    return { busy: this.all.size - idle, idle };
  }
}
