/**
 * A points plan's workloads, checked before anything is sent: every point whose client is
 * `ik load-trial run` reads its `workload.file` at its start and refuses a missing or malformed one
 * (exit 64/65), which the runner records as `client_failed` and which stops the plan after the
 * preflight and any earlier points already ran. A plan naming such a file is refused whole instead,
 * like every other plan problem (exit 65), before the preflight's first request.
 * @module
 */
import { resolve } from "node:path";
import { dataError } from "../cli/errors.ts";
import { parseWorkload } from "../load_trial/workload.ts";
import { isIkLoadTrial, type Plan, substituteArgv } from "./plan.ts";

/** Reads a file's text; throws a Node-style error (with `code`) when it cannot. */
export type ReadText = (path: string) => Promise<string>;

/**
 * Checks the workload file of every point whose client is `ik load-trial run`: it exists, is
 * readable and is a workload `ik load-trial prepare` wrote (its checks, sha256 included). Paths are
 * resolved against `cwd`, the folder the clients run in. Each file is read once.
 * @param plan the parsed plan
 * @param planPath the plan as the user named it (for the error)
 * @param cwd the folder the clients are started in
 * @param read reads a file's text
 * @param values what the runner fills `{base}` and `{model}` with (`{point_id}` is each point's id)
 * @throws IkError data (65) naming every point whose workload cannot be used
 */
export async function checkPlanWorkloads(plan: Plan, planPath: string, cwd: string, read: ReadText, values: { base: string; model: string }): Promise<void> {
  const verdicts = new Map<string, string | null>();
  const problems: string[] = [];
  for (const p of plan.points) {
    if (!isIkLoadTrial(p.client_argv)) continue;
    // The client's --workload is workload.file word for word (parsePlan), with the runner's
    // placeholders filled in; {point_dir} names a folder the run makes, so no workload is there yet.
    if (p.workload.file.includes("{point_dir}")) {
      problems.push(`point '${p.id}': workload.file ${p.workload.file} is in {point_dir}, which the run creates empty: prepare the workload elsewhere`);
      continue;
    }
    const [named] = substituteArgv([p.workload.file], { ...values, point_id: p.id, point_dir: "{point_dir}" }, []);
    const abs = resolve(cwd, named);
    let why = verdicts.get(abs);
    if (why === undefined) {
      why = await workloadProblem(abs, named, read);
      verdicts.set(abs, why);
    }
    if (why !== null) problems.push(`point '${p.id}': workload.file ${why}`);
  }
  if (problems.length) {
    throw dataError(planPath, `${problems.length} plan problem${problems.length === 1 ? "" : "s"}: ${problems.slice(0, 30).join("; ")}`,
      "write the workload with 'ik load-trial prepare' (paths are relative to the folder ik runs in) and rerun");
  }
}

async function workloadProblem(abs: string, named: string, read: ReadText): Promise<string | null> {
  let text: string;
  try {
    text = await read(abs);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    const what = code === "ENOENT" ? "not found" : code === "EISDIR" ? "is a folder, not a workload file" : code === "EACCES" ? "cannot be read (permission denied)" : `cannot be read (${code ?? (e as Error).message})`;
    return `${named} ${what}${named === abs ? "" : ` (${abs})`}`;
  }
  try {
    parseWorkload(text, named);
    return null;
  } catch (e) {
    return `${named} is not a usable workload: ${(e as Error).message}`;
  }
}
