/**
 * Faults: for each personality and each fault kind the mock injects, ik's client must report the
 * failure with the right error kind (CONTRACTS.md "Failure kinds"), as a row and never an exception.
 */
import { broken, type Check, equal } from "./checks.ts";
import { startMockProcess } from "./mock_process.ts";
import type { Personality, SelftestDeps } from "./send.ts";

/**
 * Idle timeout the stall and slow-headers requests run with: they last longer than it. The other
 * faults keep the client's default (10 s): their answer comes at once on a quiet host, and a host
 * busy starting the other personalities' mock processes (the Node build boots in ~0.3 s of CPU on
 * 2 cores) must not turn a 429 into a timeout.
 */
const IDLE_TIMEOUT_S = 0.4;
const STALL_S = 1.2;

/** Every fault kind MOCK.md defines, with the row a correct client produces for it. */
export const FAULTS: { fault: string; kind: string; status?: number }[] = [
  { fault: "http429", kind: "http", status: 429 },
  { fault: "http500", kind: "http", status: 500 },
  { fault: "http503", kind: "http", status: 503 },
  { fault: "error-event", kind: "protocol" },
  { fault: "truncate", kind: "protocol" },
  { fault: "malformed", kind: "protocol" },
  { fault: `stall:${STALL_S}`, kind: "timeout" },
  { fault: `slow-headers:${STALL_S}`, kind: "timeout" },
  { fault: "reset", kind: "network" },
];

/**
 * The failure kind a correct client reports for a fault on this personality: trtllm-serve has no
 * mid-stream error event (it re-raises, and its server drops the connection mid-body), so its
 * error-event is a `network` failure where the others' is `protocol`.
 */
export function kindFor(f: { fault: string; kind: string }, engine: Personality): string {
  return f.fault === "error-event" && engine === "trtllm" ? "network" : f.kind;
}

/** Runs every fault kind against one personality, one mock process per fault. */
export async function faultChecks(deps: SelftestDeps, engine: Personality): Promise<Check[]> {
  const g = `faults/${engine}`;
  const out: Check[] = [];
  for (const f of FAULTS) {
    if (deps.signal?.aborted) break;
    let mock;
    try {
      mock = await startMockProcess(deps.rt, [
        "--engine",
        engine,
        "--ttft-ms",
        "10",
        "--tpot-ms",
        "2",
        "--fault",
        f.fault,
      ], deps.ikArgv);
    } catch (e) {
      out.push(broken(g, f.fault, (e as Error).message));
      continue;
    }
    try {
      const row = await deps.send({
        baseUrl: mock.baseUrl,
        engine,
        maxTokens: 16,
        prompt: `fault ${f.fault}`,
        exactLength: true,
        idleTimeoutS: f.kind === "timeout" ? IDLE_TIMEOUT_S : undefined,
      });
      const got = row.ok ? "ok" : `${row.error_kind}${f.status ? ` ${row.status}` : ""}`;
      out.push(equal(g, f.fault, got, `${kindFor(f, engine)}${f.status ? ` ${f.status}` : ""}`));
    } catch (e) {
      out.push(broken(g, f.fault, `the client threw instead of returning a row: ${(e as Error).message}`));
    } finally {
      await mock.stop();
    }
  }
  return out;
}
