/** What `ik --version` prints: version, git revision, compile target and the runtime inside. */
import type { Runtime } from "../runtime/mod.ts";
import { BUILD_TARGET, GIT_REV, VERSION } from "../version.ts";

/** The version as a JSON-able object. */
export function versionInfo(rt: Pick<Runtime, "name" | "version">): Record<string, string> {
  return { name: "ik", version: VERSION, git_rev: GIT_REV, target: BUILD_TARGET, runtime: `${rt.name} ${rt.version}` };
}

/** The one-line human form. */
export function versionLine(rt: Pick<Runtime, "name" | "version">): string {
  const v = versionInfo(rt);
  return `ik ${v.version} (rev ${v.git_rev}, target ${v.target}, runtime ${v.runtime})`;
}
