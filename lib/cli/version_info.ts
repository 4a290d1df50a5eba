/** What `ik --version` prints: version, git revision, compile target and the runtime inside. */
import type { Runtime } from "../runtime/mod.ts";
import { BUILD_TARGET, GIT_REV, VERSION } from "../version.ts";

/**
 * The version as a JSON-able object. `runtime_flags` are the runtime's own flags (the Bun binary is
 * built with `--smol`, JSC's smaller heap sizing, which its memory figures depend on), "" for none.
 */
export function versionInfo(rt: Pick<Runtime, "name" | "version" | "runtimeFlags">): Record<string, string> {
  return { name: "ik", version: VERSION, git_rev: GIT_REV, target: BUILD_TARGET, runtime: `${rt.name} ${rt.version}`, runtime_flags: rt.runtimeFlags().join(" ") };
}

/** The one-line human form (the runtime's flags after it, where there are any). */
export function versionLine(rt: Pick<Runtime, "name" | "version" | "runtimeFlags">): string {
  const v = versionInfo(rt);
  return `ik ${v.version} (rev ${v.git_rev}, target ${v.target}, runtime ${v.runtime}${v.runtime_flags ? `, flags ${v.runtime_flags}` : ""})`;
}
