/**
 * The evidence store (CONTRACTS.md "Evidence store layout"): a run writes into
 * `<root>/.staging/<id>/`, journals each request row as it completes, and at the end (normal or
 * interrupted) writes `evidence.json` with `complete: true|false` and renames the directory into
 * place, so a record in the store is always whole. Directories are 0700. Loading checks
 * integrity: every listed artifact must exist with its sha256. A write that fails (a full or
 * read-only disk) is the exit-74 error naming the file; the journal never holds a torn line and
 * evidence.json is either whole or absent.
 * @module
 */
import { createHash } from "node:crypto";
import { mkdir, open, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join, relative, resolve, sep } from "node:path";
import { parseEvidenceId } from "./evidence_id.ts";
import { JsonlWriter } from "./jsonl_writer.ts";
import { guardWrite, writeWhole } from "./output_error.ts";
import { scrubbedJson, scrubKnown } from "./scrub.ts";

/** The store root from the environment: `$IK_RUNS_DIR`, else `./runs`. */
export function storeRoot(env: (name: string) => string | undefined, cwd: string): string {
  return resolve(cwd, env("IK_RUNS_DIR") || "runs");
}

/** One artifact a record lists. */
export interface Artifact {
  /** Path relative to the record's directory. */
  path: string;
  sha256: string;
  /** What it is: "requests", "outputs_index", "inputs", … */
  role: string;
  bytes: number;
}

/** Bytes read at a time by {@link fileSha256}, into one buffer. */
const HASH_READ_BYTES = 1 << 20;

/**
 * sha256 of a file's bytes, hex, read through one reused buffer (a load level's artifacts can be
 * hundreds of MB: a read stream's fresh buffer per chunk left ~47 MB of garbage behind a 40,000-request
 * level's record, its RSS peak).
 */
export async function fileSha256(path: string): Promise<string> {
  const h = createHash("sha256");
  const fh = await open(path, "r");
  try {
    const buf = new Uint8Array(HASH_READ_BYTES);
    for (;;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, null);
      if (bytesRead === 0) break;
      h.update(bytesRead === buf.length ? buf : buf.subarray(0, bytesRead));
    }
  } finally {
    await fh.close();
  }
  return h.digest("hex");
}

/** A run being written: its staging directory, its journal and its artifacts. */
export class StagedRun {
  /** Rows journaled so far. */
  rows = 0;
  #journal: JsonlWriter | null = null;

  private constructor(readonly root: string, readonly id: string, readonly dir: string) {}

  /** Creates `<root>/.staging/<id>/` (0700) with an empty requests.jsonl. */
  static async create(root: string, id: string): Promise<StagedRun> {
    if (!parseEvidenceId(id)) throw new RangeError(`not an evidence id: '${id}'`);
    const dir = join(root, ".staging", id);
    await guardWrite(dir, () => mkdir(dir, { recursive: true, mode: 0o700 }));
    await guardWrite(join(dir, "requests.jsonl"), () => writeFile(join(dir, "requests.jsonl"), "", { mode: 0o600 }));
    return new StagedRun(root, id, dir);
  }

  /**
   * Appends one row to requests.jsonl at once (a crash loses nothing already measured), scrubbed,
   * as one whole line; a failed write raises exit 74 and leaves the rows before it whole.
   */
  async journal(row: unknown): Promise<void> {
    this.#journal ??= await JsonlWriter.open(join(this.dir, "requests.jsonl"));
    this.#journal.write(row);
    await this.#journal.flush();
    if (this.#journal.failed) throw this.#journal.failed;
    this.rows = this.#journal.lines;
  }

  /**
   * Closes the journal (finish does it too). A failure journal() has already raised is not raised
   * again, so a run stopped by it can still be finished as incomplete.
   */
  async closeJournal(): Promise<void> {
    const j = this.#journal;
    if (!j) return;
    const raised = j.failed !== null;
    this.#journal = null;
    await j.close().catch((e) => {
      if (!raised) throw e;
    });
  }

  /**
   * Writes a file inside the run (parents created 0700); the path must stay inside. Text has this
   * run's secret values removed (see ./scrub.ts).
   */
  async write(relPath: string, data: string | Uint8Array): Promise<string> {
    const p = this.inside(relPath);
    await guardWrite(p, () => mkdir(resolve(p, ".."), { recursive: true, mode: 0o700 }));
    await writeWhole(p, typeof data === "string" ? scrubKnown(data) : data);
    return p;
  }

  /** The artifact entry for a file already in the run. */
  async artifact(relPath: string, role: string): Promise<Artifact> {
    const p = this.inside(relPath);
    return { path: relPath.split(sep).join("/"), sha256: await fileSha256(p), role, bytes: (await stat(p)).size };
  }

  /**
   * Writes evidence.json (through the scrubber: keys, URLs, argv, this run's secret values) and
   * renames the run into `<root>/<id>/`. evidence.json appears whole or not at all (written
   * beside, then renamed); a failure is exit 74 and the staging directory keeps the journal.
   * @returns the final directory
   */
  async finish(record: Record<string, unknown>): Promise<string> {
    await this.closeJournal();
    await writeWhole(join(this.dir, "evidence.json"), scrubbedJson(record, 2) + "\n");
    const final = join(this.root, this.id);
    await guardWrite(final, () => rename(this.dir, final));
    return final;
  }

  /** Removes the staging directory (a run that produced nothing worth keeping). */
  async discard(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }

  private inside(relPath: string): string {
    const p = resolve(this.dir, relPath);
    const rel = relative(this.dir, p);
    if (rel === "" || rel.startsWith("..") || resolve(this.dir, rel) !== p) throw new RangeError(`artifact path '${relPath}' leaves the run directory`);
    return p;
  }
}

/** Why a stored record cannot be trusted, or null when every artifact matches its sha256. */
export async function integrityProblem(dir: string, record: { artifacts?: Artifact[] }): Promise<string | null> {
  const list: unknown = record.artifacts ?? [];
  if (!Array.isArray(list)) return "its 'artifacts' is not a list of {path, sha256, role}";
  for (const a of list as Artifact[]) {
    if (a === null || typeof a !== "object" || typeof a.path !== "string" || typeof a.sha256 !== "string") {
      return `its 'artifacts' holds ${JSON.stringify(a)?.slice(0, 60) ?? String(a)}, not a {path, sha256, role}`;
    }
    const p = resolve(dir, a.path);
    if (relative(dir, p).startsWith("..")) return `artifact '${a.path}' points outside the record`;
    let got: string;
    try {
      got = await fileSha256(p);
    } catch {
      return `artifact '${a.path}' (${a.role}) is missing`;
    }
    if (got !== a.sha256) return `artifact '${a.path}' (${a.role}) changed: sha256 ${got.slice(0, 12)}… != recorded ${a.sha256.slice(0, 12)}…`;
  }
  return null;
}

/** Loads `<root>/<id>/evidence.json` and checks its integrity; throws a one-line reason. */
export async function loadRecord(root: string, id: string): Promise<{ dir: string; record: Record<string, unknown> }> {
  if (!parseEvidenceId(id)) throw new RangeError(`'${id}' is not an evidence id (kind-yyyymmddThhmmssZ-8hex)`);
  const dir = join(root, id);
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(await readFile(join(dir, "evidence.json"), "utf8"));
  } catch (e) {
    throw new RangeError(`${join(dir, "evidence.json")}: ${(e as { code?: string }).code === "ENOENT" ? "no such record" : "not valid JSON"}`);
  }
  const problem = await integrityProblem(dir, record as { artifacts?: Artifact[] });
  if (problem) throw new RangeError(`${id}: ${problem}`);
  return { dir, record };
}
