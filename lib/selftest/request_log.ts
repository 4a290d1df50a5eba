/**
 * The mock's own clock (MOCK.md `--request-log`): one `ik-request serial=N prompt=P cached=0 gen=G
 * acc=A prop=R first_ms=F last_ms=L recv_wall_ms=W` line per finished request. It is the truth the
 * client's timings are held against, and it is read here, never derived from the client's rows.
 * @module
 */

/** One parsed request-log line. */
export interface MockRequestLog {
  /** The mock's request serial. */
  serial: number;
  /** Prompt tokens, as the mock counted them. */
  prompt: number;
  /** Tokens the mock streamed. */
  gen: number;
  /** Drafts accepted (speculative decoding), 0 otherwise. */
  acc: number;
  /** Drafts proposed. */
  prop: number;
  /** When the mock wrote the first token event, ms after it read the request; null when absent. */
  firstMs: number | null;
  /** When the mock wrote the last token event, ms after it read the request; null when absent. */
  lastMs: number | null;
  /** Wall-clock epoch ms when the mock read the request (comparable across processes); null when absent. */
  recvWallMs: number | null;
}

const LINE = /^ik-request (.*)$/;

function field(fields: Map<string, string>, key: string): number | null {
  const s = fields.get(key);
  if (s === undefined) return null;
  const v = Number(s);
  return Number.isFinite(v) ? v : null;
}

/** Parses one line; null when it is not a request-log line. */
export function parseRequestLogLine(line: string): MockRequestLog | null {
  const m = line.trim().match(LINE);
  if (!m) return null;
  const fields = new Map<string, string>();
  for (const kv of m[1].split(/\s+/)) {
    const i = kv.indexOf("=");
    if (i > 0) fields.set(kv.slice(0, i), kv.slice(i + 1));
  }
  const serial = field(fields, "serial");
  const prompt = field(fields, "prompt");
  const gen = field(fields, "gen");
  if (serial === null || prompt === null || gen === null) return null;
  return {
    serial,
    prompt,
    gen,
    acc: field(fields, "acc") ?? 0,
    prop: field(fields, "prop") ?? 0,
    firstMs: field(fields, "first_ms"),
    lastMs: field(fields, "last_ms"),
    recvWallMs: field(fields, "recv_wall_ms"),
  };
}

/** Every request-log line in a captured log, in the order written. */
export function parseRequestLog(text: string): MockRequestLog[] {
  const out: MockRequestLog[] = [];
  for (const line of text.split("\n")) {
    const r = parseRequestLogLine(line);
    if (r) out.push(r);
  }
  return out;
}

/**
 * Pairs requests with their log lines by prompt length: the selftest gives every request of a
 * series a distinct prompt word count, so the k-th shortest prompt is the k-th smallest `prompt`
 * (this holds for concurrent requests too, where serial order says nothing).
 * @returns the log line for each request (same order as `words`), or an error message
 */
export function pairByPrompt(
  words: readonly number[],
  logs: readonly MockRequestLog[],
): MockRequestLog[] | string {
  if (logs.length !== words.length) {
    return `the mock logged ${logs.length} requests, ${words.length} were sent`;
  }
  const byWords = words.map((w, i) => ({ w, i })).sort((a, b) => a.w - b.w);
  const byPrompt = [...logs].sort((a, b) => a.prompt - b.prompt);
  for (let k = 1; k < byPrompt.length; k++) {
    if (byPrompt[k].prompt === byPrompt[k - 1].prompt || byWords[k].w === byWords[k - 1].w) {
      return `two requests with the same prompt length (${byPrompt[k].prompt} tokens): cannot pair them`;
    }
  }
  const out: MockRequestLog[] = new Array(words.length);
  for (let k = 0; k < byWords.length; k++) out[byWords[k].i] = byPrompt[k];
  return out;
}
