/**
 * The server side of a unit: `ik-request serial=… prompt=… cached=… gen=… acc=… prop=…` lines in
 * a container log, key=value, anywhere in a line (a log prefix before them is fine). This is what
 * `ik mock --request-log` prints, and what a patched engine logs per finished request.
 * @module
 */

/** One request as the server logged it. */
export interface ContainerRec {
  serial: number;
  /** Prompt tokens. */
  prompt: number;
  /** Prompt tokens served from the prefix cache. */
  cached: number;
  /** Tokens generated. */
  gen: number;
  /** Draft tokens accepted. */
  acc: number;
  /** Draft tokens proposed. */
  prop: number;
}

/** A parsed log: the records sorted by serial, and the `ik-request` lines that could not be read. */
export interface ContainerLog {
  recs: ContainerRec[];
  bad: { line: number; why: string }[];
}

const MARKER = /(?:^|[^\w-])ik-request(?=\s)(.*)$/;
const REQUIRED = ["serial", "prompt", "gen"] as const;

/** Parses a container log's text. */
export function parseContainerLog(text: string): ContainerLog {
  const recs: ContainerRec[] = [];
  const bad: ContainerLog["bad"] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]);
    if (!m) continue;
    const kv = new Map<string, string>();
    for (const tok of m[1].trim().split(/\s+/)) {
      const eq = tok.indexOf("=");
      if (eq > 0) kv.set(tok.slice(0, eq), tok.slice(eq + 1));
    }
    const vals: Record<string, number> = {};
    let why = "";
    for (const k of ["serial", "prompt", "cached", "gen", "acc", "prop"]) {
      const s = kv.get(k);
      if (s === undefined) {
        if ((REQUIRED as readonly string[]).includes(k)) why ||= `no ${k}=`;
        vals[k] = 0;
        continue;
      }
      if (!/^\d+$/.test(s)) why ||= `${k}=${s.slice(0, 20)} is not a non-negative integer`;
      vals[k] = Number(s);
    }
    // Values no engine can log: more drafts accepted than proposed, more prompt tokens cached than sent.
    if (!why && vals.acc > vals.prop) why = `acc=${vals.acc} > prop=${vals.prop} (more drafts accepted than proposed)`;
    if (!why && vals.cached > vals.prompt) why = `cached=${vals.cached} > prompt=${vals.prompt} (more prompt tokens cached than sent)`;
    if (why) {
      bad.push({ line: i + 1, why });
      continue;
    }
    recs.push({ serial: vals.serial, prompt: vals.prompt, cached: vals.cached, gen: vals.gen, acc: vals.acc, prop: vals.prop });
  }
  recs.sort((a, b) => a.serial - b.serial);
  return { recs, bad };
}
