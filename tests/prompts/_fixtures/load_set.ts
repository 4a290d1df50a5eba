// Loads the prompt set named by argv[0] in a process of its own (tests run it under
// `prlimit --as`) and prints one JSON line: {ok, code, line, prompts, peak_rss_kib}.
import { readFileSync } from "node:fs";
import { formatErrorLine, IkError } from "../../../lib/cli/errors.ts";
import { loadPromptSet } from "../../../lib/prompts/mod.ts";
import { runtime } from "../../../lib/runtime/mod.ts";

const peak = () => Number(readFileSync("/proc/self/status", "utf8").match(/VmHWM:\s+(\d+)/)?.[1] ?? -1);
const [path] = runtime.args();
let out: Record<string, unknown>;
try {
  const set = await loadPromptSet(path);
  out = { ok: true, prompts: set.prompts.length };
} catch (e) {
  out = e instanceof IkError
    ? { ok: false, code: e.code, line: formatErrorLine(e.where, e.message, e.hint) }
    : { ok: false, code: 70, line: String(e) };
}
runtime.writeStdout(JSON.stringify({ ...out, peak_rss_kib: peak() }) + "\n");
