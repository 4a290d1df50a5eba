/**
 * A run's outputs and exact inputs (seed 000 _write_run_files): `outputs/<label>/<rel>` and
 * `inputs/<label>/<rel>` inside the record, with `outputs/<label>/index.json` listing exactly this
 * run's files and their sha256 (the record's `outputs_index` artifact). With a run dir the same
 * bytes are written there too, and the run dir's `index.json` is merged across runs.
 * @module
 */
import { createHash } from "node:crypto";
import { copyFile, mkdir, readFile, rename, rm } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import type { IkError } from "../cli/errors.ts";
import { guardWrite, isOutputError, scrubJsonLine, type StagedRun, writeWhole } from "../evidence/mod.ts";

/** A document to write, by path relative to `outputs/<label>/` (or `inputs/<label>/`). */
export type RunDoc = readonly [rel: string, doc: unknown];

function dump(doc: unknown): Uint8Array {
  // Secret-looking keys and this run's secret values; prompts and outputs are otherwise kept exact.
  return new TextEncoder().encode(scrubJsonLine(doc) + "\n");
}

function sortedObject(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** What {@link writeRunFiles} wrote. */
export interface RunFilesWritten {
  /** The index's path inside the run, or null when there were no documents. */
  index: string | null;
  /** Why the run dir's copy stopped (exit 74), or null: the record's own copy is whole either way. */
  runDirError: IkError | null;
}

/**
 * Writes the documents into the run, and a copy into the run dir when there is one. A failed copy
 * (a full or read-only run dir) stops the copy, not the run's own files: the record is still made,
 * and the caller reports the copy's failure after it.
 * @param contractInputs also write `inputs/<rel>` (the engine-independent path single mode uses)
 */
export async function writeRunFiles(
  run: StagedRun,
  runDir: string | null,
  label: string,
  outputs: readonly RunDoc[],
  inputs: readonly RunDoc[],
  contractInputs = false,
): Promise<RunFilesWritten> {
  if (!outputs.length && !inputs.length) return { index: null, runDirError: null };
  const snap = { label, files: {} as Record<string, string>, inputs: {} as Record<string, string> };
  let extraRoot = runDir ? resolve(runDir) : null;
  let runDirError: IkError | null = null;
  const copy = async (write: () => Promise<void>) => {
    if (extraRoot === null) return;
    try {
      await write();
    } catch (e) {
      if (!isOutputError(e)) throw e;
      runDirError = e;
      extraRoot = null;
    }
  };
  for (const [kind, docs, key] of [["outputs", outputs, "files"], ["inputs", inputs, "inputs"]] as const) {
    for (const [rel, doc] of docs) {
      const data = dump(doc);
      const targets = [join(kind, label, rel)];
      if (kind === "inputs" && contractInputs) targets.push(join("inputs", rel));
      for (const t of targets) {
        await run.write(t, data);
        const root = extraRoot;
        if (root) {
          await copy(async () => {
            await guardWrite(join(root, t), () => mkdir(dirname(join(root, t)), { recursive: true, mode: 0o700 }));
            await writeWhole(join(root, t), data, 0o644);
          });
        }
      }
      snap[key][rel] = createHash("sha256").update(data).digest("hex");
    }
  }
  const index = { label, files: sortedObject(snap.files), inputs: sortedObject(snap.inputs) };
  const rel = join("outputs", label, "index.json");
  await run.write(rel, JSON.stringify(index, null, 1) + "\n");
  const root = extraRoot as string | null;
  if (root) await copy(() => mergeRunDirIndex(root, label, index));
  return { index: rel, runDirError };
}

/** Merges this run's files into the run dir's `outputs/<label>/index.json` (written whole; a failure is the caller's exit 74). */
async function mergeRunDirIndex(root: string, label: string, index: { files: Record<string, string>; inputs: Record<string, string> }): Promise<void> {
  const p = join(root, "outputs", label, "index.json");
  let old: { files?: Record<string, string>; inputs?: Record<string, string> } = {};
  try {
    old = JSON.parse(await readFile(p, "utf8"));
  } catch { /* first run of this label, or unreadable: start again */ }
  const merged = {
    label,
    note: "merged across runs of this label; each record keeps its own snapshot",
    files: sortedObject({ ...(old.files ?? {}), ...index.files }),
    inputs: sortedObject({ ...(old.inputs ?? {}), ...index.inputs }),
  };
  await guardWrite(p, () => mkdir(dirname(p), { recursive: true, mode: 0o700 }));
  await writeWhole(p, JSON.stringify(merged, null, 1) + "\n", 0o644);
}

/**
 * Copies files the run already holds (load mode's per-level outputs and inputs, written as they
 * were measured) into the run dir, each whole or not at all (`<dst>.part`, then renamed), and
 * merges their sha256 into the run dir's `outputs/<label>/index.json` as {@link writeRunFiles}
 * does. A failure stops the copy and is returned (exit 74 for the caller); the record is whole
 * either way.
 * @param files paths relative to the run: `outputs/<label>/…` and `inputs/<label>/…`, with the sha256 the record lists
 */
export async function copyRunFilesToRunDir(
  runPath: string,
  runDir: string,
  label: string,
  files: readonly { rel: string; sha256: string }[],
): Promise<IkError | null> {
  const root = resolve(runDir);
  const index = { files: {} as Record<string, string>, inputs: {} as Record<string, string> };
  try {
    for (const f of files) {
      const dst = join(root, f.rel);
      await guardWrite(dst, async () => {
        await mkdir(dirname(dst), { recursive: true, mode: 0o700 });
        await copyFile(join(runPath, f.rel), `${dst}.part`);
        await rename(`${dst}.part`, dst);
      }).catch(async (e) => {
        await rm(`${dst}.part`, { force: true }).catch(() => {});
        throw e;
      });
      const [kind, , ...rest] = f.rel.split("/");
      if (kind === "outputs" || kind === "inputs") index[kind === "outputs" ? "files" : "inputs"][rest.join("/")] = f.sha256;
    }
    await mergeRunDirIndex(root, label, index);
    return null;
  } catch (e) {
    if (!isOutputError(e)) throw e;
    return e;
  }
}
