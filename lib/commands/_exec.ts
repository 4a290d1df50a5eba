/**
 * A short command run through the runtime (its own process group, killed on timeout), with its
 * stdout: how commands ask nvidia-smi and similar tools. Library code receives this as an
 * injected ExecFn and never spawns by itself.
 * @module
 */
import type { ExecFn } from "../gpu/mod.ts";
import type { Runtime } from "../runtime/mod.ts";

/** An ExecFn over a runtime; a command that cannot start reports code 127. */
export function runtimeExec(rt: Runtime): ExecFn {
  return async (argv, { timeoutMs }) => {
    let group;
    try {
      group = rt.spawn(argv, { pipeStdout: true });
    } catch {
      return { code: 127, stdout: "" };
    }
    const timer = setTimeout(() => group.killGroup("SIGKILL"), timeoutMs);
    try {
      const chunks: Uint8Array[] = [];
      let size = 0;
      if (group.stdout) {
        try {
          for await (const c of group.stdout) {
            if (size < 4 * 1024 * 1024) chunks.push(c);
            size += c.length;
          }
        } catch { /* a child that could not start closes its pipe with an error (Bun: AbortError) */ }
      }
      const st = await group.exited;
      const all = new Uint8Array(Math.min(size, 4 * 1024 * 1024));
      let o = 0;
      for (const c of chunks) {
        all.set(c.subarray(0, all.length - o), o);
        o += Math.min(c.length, all.length - o);
      }
      return { code: st.code, stdout: new TextDecoder().decode(all) };
    } finally {
      clearTimeout(timer);
    }
  };
}
