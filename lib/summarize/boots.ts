/**
 * boots.tsv (R731): one row per server boot with the launcher md5, image, EXL3 env digest, keys,
 * policy, cache and the GPU clock offsets read at boot and after the cell. A unit is one
 * configuration throughout, with the clocks it was meant to have; any difference VOIDs it.
 * @module
 */
import type { TsvRow } from "./tsv.ts";

/** Fields that must be the same in every boot. */
export const BOOT_SAME = ["launcher_md5", "image", "image_id", "env_sha", "env_n", "keys_n", "policy", "cache", "window"] as const;

/** Fields shown in the configuration block (from the first boot). */
export const BOOT_SHOWN = [
  "image", "image_id", "launcher_md5", "env_n", "env_sha", "keys_n", "window", "slots", "cache", "policy", "gpc_boot", "mem_boot",
  "power_limit_w", "vram_free",
] as const;

/** The boot check's findings. */
export interface BootCheck {
  /** The configuration block: [key, value] of the first boot, plus the boot count. */
  config: [string, string][];
  /** One line per difference (each VOIDs a decision). */
  bad: string[];
}

const words = (s: string) => s.trim().split(/\s+/).join(" ");
const absent = (v: string | undefined) => v === undefined || v === "" || v === "-";

/**
 * Checks the boots.
 * @param boots the rows of boots.tsv
 * @param wantGpc expected core (GPC) offsets per card, space-separated
 * @param wantMem expected memory offsets per card, space-separated
 */
export function checkBoots(boots: readonly TsvRow[], wantGpc: string, wantMem: string): BootCheck {
  const bad: string[] = [];
  for (const k of BOOT_SAME) {
    const vals = [...new Set(boots.map((b) => b.fields[k] ?? ""))];
    if (vals.length > 1) bad.push(`boots differ in ${k}: ${vals.sort().map((v) => `'${v}'`).join(", ")}`);
  }
  for (const b of boots) {
    const tag = b.fields.tag ?? `line ${b.line}`;
    for (const [k, want] of [["gpc_boot", wantGpc], ["gpc_after", wantGpc], ["mem_boot", wantMem], ["mem_after", wantMem]] as const) {
      const v = b.fields[k];
      if (absent(v)) {
        if (k.endsWith("_boot")) bad.push(`${tag}: ${k} not recorded`);
      } else if (words(v) !== words(want)) bad.push(`${tag}: ${k} '${v}' != '${words(want)}'`);
    }
  }
  const config: [string, string][] = [];
  if (boots.length) {
    for (const k of BOOT_SHOWN) if (k in boots[0].fields) config.push([k, boots[0].fields[k]]);
    config.push(["boots", String(boots.length)]);
  }
  return { config, bad };
}
