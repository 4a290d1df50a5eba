/**
 * A `bench rounds` run into a run dir that already holds an earlier run's outputs: those are moved
 * aside, whole, to `<run-dir>/previous/<its start, UTC>/` before anything is written, so the new
 * run's cells, logs and summary never mix with the old ones (a report of the run dir would
 * otherwise count the old cells too) and nothing of the old run is lost. Only ik's own files move:
 * everything under `rounds/`, and under `logs/`, `prometheus/` and `resolved_config/` the per-cell
 * files (`<label>.r<k>.…`); anything else in the run dir (the manifest, a prompt set, an intake
 * pin, a user's own files) stays where it is.
 * @module
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** The folders of a run dir a run writes per-cell files into, with the names that are ik's. */
const CELL_FOLDERS: readonly { dir: string; mine: (name: string) => boolean }[] = [
  { dir: "rounds", mine: () => true },
  { dir: "logs", mine: (n) => /^.+\.r\d+\.(log|serve\.stderr)$/.test(n) },
  { dir: "prometheus", mine: (n) => /^.+\.r\d+\.(before|after)\.txt$/.test(n) },
  { dir: "resolved_config", mine: (n) => /^.+\.r\d+\.json$/.test(n) },
];

function filesIn(dir: string): string[] {
  try {
    return readdirSync(dir).filter((n) => {
      try {
        return statSync(join(dir, n)).isFile();
      } catch {
        return false;
      }
    }).sort();
  } catch {
    return [];
  }
}

/** `20250102T030405Z` from the old plan's `started`, else from the oldest file's time. */
function stampOf(runDir: string, files: readonly string[]): string {
  let when: number = Number.NaN;
  try {
    when = Date.parse(JSON.parse(readFileSync(join(runDir, "rounds", "plan.json"), "utf8")).started);
  } catch { /* no plan, or not JSON */ }
  if (!Number.isFinite(when)) when = Math.min(...files.map((f) => statSync(join(runDir, f)).mtimeMs));
  return new Date(when).toISOString().replace(/\.\d+Z$/, "Z").replace(/[-:]/g, "");
}

/** What {@link movePreviousRun} did. */
export interface PreviousRunMove {
  /** The folder the old outputs went to, relative to the run dir. */
  to: string;
  /** How many files moved. */
  files: number;
}

/**
 * Moves an earlier run's outputs out of `runDir` (see the module notes); null when there were none.
 * @throws the file system's error when a move fails (the caller maps it: exit 74)
 */
export function movePreviousRun(runDir: string): PreviousRunMove | null {
  const files: string[] = [];
  for (const f of CELL_FOLDERS) for (const n of filesIn(join(runDir, f.dir))) if (f.mine(n)) files.push(join(f.dir, n));
  if (!files.length) return null;
  const stamp = stampOf(runDir, files);
  let to = join("previous", stamp);
  for (let i = 2; existsSync(join(runDir, to)); i++) to = join("previous", `${stamp}-${i}`);
  for (const f of CELL_FOLDERS) {
    const moving = files.filter((p) => p.startsWith(f.dir + "/"));
    if (!moving.length) continue;
    mkdirSync(join(runDir, to, f.dir), { recursive: true });
    for (const p of moving) renameSync(join(runDir, p), join(runDir, to, p));
  }
  // An emptied rounds/ goes too (the new run makes its own); the other folders may be the user's.
  try {
    rmdirSync(join(runDir, "rounds"));
  } catch { /* not empty (a subfolder), or gone */ }
  return { to, files: files.length };
}
