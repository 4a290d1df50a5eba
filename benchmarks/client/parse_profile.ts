/**
 * parse_profile.ts — where ik's client CPU per SSE event goes, without the network. Complements
 * ik_bench.ts (which measures the whole process against the real server): the same 259-event
 * response (a recording of ../shared/perf/sse_server.mjs, max_tokens 256) is fed, in reads of
 * K events, through nested subsets of the hot path, so each difference is one stage's cost.
 *
 *   bun benchmarks/client/parse_profile.ts RESPONSE.sse [REPS]
 *   (record RESPONSE.sse with: curl -sN -X POST -d '{"max_tokens":256,"stream":true}' \
 *      http://127.0.0.1:PORT/v1/chat/completions > /tmp/resp256.sse   while sse_server.mjs runs)
 *
 * Stages (ns per event, median of REPS timed passes over 2000 responses each):
 *   decode         TextDecoder.decode(stream) of each read
 *   sse-scan       + SseParser (line scan, data slices), sink does nothing
 *   json           + JSON.parse of every data payload (sink parses, keeps nothing)
 *   ik-state       SseParser + StreamState (ik's sink: JSON.parse, token test, text, times, usage)
 *   careful        client_min.ts's loop body (decode, indexOf("\n\n"), JSON.parse, timestamp per event)
 *   ik-stream      streamCompletion() end to end with an injected fetch that returns the recorded
 *                  bytes as a ReadableStream (everything but the socket: timers, AbortController,
 *                  reader, parse, result), plus requestRow()
 *   ik-loop        the same injected Response read by a bare loop into SseParser + StreamState
 *                  (ik-stream minus ik-loop = streamCompletion's per-request wrapper + requestRow)
 *   web-stream     the same injected Response read with getReader() and nothing else
 * @module
 */
import { SseParser } from "../../lib/sse/mod.ts";
import { StreamState } from "../../lib/client/_stream_state.ts";
import { parseEndpoint, requestRow, streamCompletion } from "../../lib/client/mod.ts";
import { buildBody } from "../../lib/engines/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const [file, repsArg] = runtime.args();
if (!file) {
  runtime.writeStderr("usage: parse_profile.ts RESPONSE.sse [REPS]\n");
  runtime.exit(64);
}
const REPS = Number(repsArg ?? 5);
const N = 2000;
const whole = new Uint8Array(await runtime.files.readBytes(file));
const text = new TextDecoder().decode(whole);
const EVENTS = text.split("\n\n").filter((s) => s.length > 0).length; // 259
const encoder = new TextEncoder();

/** The response cut into reads of `k` whole events each (k = Infinity: one read). */
function reads(k: number): Uint8Array[] {
  const evs = text.split("\n\n").filter((s) => s.length > 0).map((s) => s + "\n\n");
  if (!Number.isFinite(k)) return [whole];
  const out: Uint8Array[] = [];
  for (let i = 0; i < evs.length; i += k) out.push(encoder.encode(evs.slice(i, i + k).join("")));
  return out;
}

const noop = { onEvent(_d: string, _e: string) {} };
let sinkAcc = 0;
const parseOnly = {
  onEvent(d: string) {
    if (d !== "[DONE]") sinkAcc += JSON.parse(d).created & 1;
  },
};

type Stage = (chunks: Uint8Array[]) => void | Promise<void>;
const stages: Record<string, Stage> = {
  decode(chunks) {
    const dec = new TextDecoder();
    for (const c of chunks) sinkAcc += dec.decode(c, { stream: true }).length;
  },
  "sse-scan"(chunks) {
    const p = new SseParser(noop);
    for (const c of chunks) p.pushBytes(c);
    p.end();
  },
  json(chunks) {
    const p = new SseParser(parseOnly);
    for (const c of chunks) p.pushBytes(c);
    p.end();
  },
  "ik-state"(chunks) {
    const st = new StreamState();
    const p = new SseParser(st);
    for (const c of chunks) {
      st.tRead = performance.now();
      p.pushBytes(c);
    }
    p.end();
    sinkAcc += st.log.length + st.text.length;
  },
  careful(chunks) {
    const dec = new TextDecoder();
    let buf = "", text = "", n = 0, last = 0;
    const itl: number[] = [];
    for (const c of chunks) {
      buf += dec.decode(c, { stream: true });
      let start = 0, i: number;
      while ((i = buf.indexOf("\n\n", start)) >= 0) {
        const ev = buf.slice(start, i);
        start = i + 2;
        if (!ev.startsWith("data: ")) continue;
        const now = performance.now();
        n++;
        const data = ev.slice(6);
        if (data === "[DONE]") continue;
        const j = JSON.parse(data);
        const ch = j.choices[0];
        if (ch) {
          itl.push(now - last);
          last = now;
          const cc = ch.delta?.content;
          if (cc) text += cc;
        }
      }
      if (start) buf = buf.slice(start);
    }
    sinkAcc += n + text.length + itl.length;
  },
  async "ik-stream"(chunks) {
    const r = await streamCompletion(ep, "chat", body, { fetch: fakeFetch(chunks) });
    if (!r.ok || r.nTokenEvents !== 256) throw new Error(`ik-stream: ${r.error} ${r.nTokenEvents}`);
    sinkAcc += requestRow(r).n_token_events;
  },
  async "ik-loop"(chunks) {
    const res = await fakeFetch(chunks)("", {});
    const st = new StreamState();
    const p = new SseParser(st);
    const reader = res.body!.getReader();
    for (;;) {
      const x = await reader.read();
      if (x.done) break;
      st.tRead = performance.now();
      p.pushBytes(x.value);
    }
    p.end();
    reader.releaseLock();
    sinkAcc += st.log.length;
  },
  async "web-stream"(chunks) {
    const res = await fakeFetch(chunks)("", {});
    const reader = res.body!.getReader();
    for (;;) {
      const x = await reader.read();
      if (x.done) break;
      sinkAcc += x.value.length;
    }
  },
};
const ep = parseEndpoint("http://127.0.0.1:9/v1");
const body = buildBody("chat", "vllm", "m", [{ role: "user", content: "hi" }], 256).body;
function fakeFetch(chunks: Uint8Array[]) {
  return (_u: string, _i: RequestInit): Promise<Response> => {
    let i = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctl) {
        if (i < chunks.length) ctl.enqueue(chunks[i++]);
        else ctl.close();
      },
    });
    return Promise.resolve(new Response(stream, { headers: { "content-type": "text/event-stream" } }));
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ks = [2, 7, Infinity];
const lines: string[] = [];
lines.push(`# ${runtime.name} ${runtime.version}; ${EVENTS} events per response; ns per event, median of ${REPS} passes x ${N} responses`);
lines.push(`| stage | ${ks.map((k) => (Number.isFinite(k) ? `${k} ev/read` : "1 read/response")).join(" | ")} |`);
lines.push(`|---|${ks.map(() => "---:").join("|")}|`);
for (const [name, fn] of Object.entries(stages)) {
  const cells: string[] = [];
  for (const k of ks) {
    const chunks = reads(k);
    for (let i = 0; i < 300; i++) await fn(chunks); // warm up the JIT
    const per: number[] = [];
    for (let r = 0; r < REPS; r++) {
      const t0 = performance.now();
      for (let i = 0; i < N; i++) await fn(chunks);
      per.push(((performance.now() - t0) * 1e6) / (N * EVENTS));
    }
    cells.push(median(per).toFixed(0));
  }
  lines.push(`| ${name} | ${cells.join(" | ")} |`);
}
runtime.writeStdout(lines.join("\n") + `\n<!-- ${sinkAcc} -->\n`);
