/**
 * What `ik report` reads of a `.staging/<id>/` journal: the request rows of a run that never wrote
 * its record (killed by SIGKILL, out of memory, a crash), a torn last line counted and left out,
 * when the journal was last written, and what else the run had staged. Never refuses.
 * @module
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { basename, join } from "node:path";
import { parseJsonl } from "../../compare/mod.ts";

type Obj = Record<string, any>;

async function kindOf(p: string): Promise<"dir" | "file" | null> {
  try {
    const s = await stat(p);
    return s.isDirectory() ? "dir" : s.isFile() ? "file" : null;
  } catch {
    return null;
  }
}

/** A `.staging/<id>/` journal: the rows of a run that never wrote its record (killed by SIGKILL, a crash). */
export interface JournalInput {
  kind: "journal";
  path: string;
  /** The evidence id the run would have had. */
  id: string;
  rows: Obj[];
  /** Lines of requests.jsonl that were not a JSON object (a torn last line). */
  badLines: number;
  /** When requests.jsonl was last written (ISO), or null. */
  lastWrite: string | null;
  /** Other files the run had staged (relative paths, at most 50). */
  files: string[];
  notes: string[];
}

/** Staged files of a journal dir, relative, at most `max` (deterministic order). */
async function stagedFiles(dir: string, max = 50): Promise<string[]> {
  const out: string[] = [];
  const walk = async (rel: string, depth: number) => {
    if (depth > 4 || out.length >= max) return;
    let names: string[] = [];
    try {
      names = (await readdir(join(dir, rel))).sort();
    } catch {
      return;
    }
    for (const n of names) {
      if (out.length >= max) return;
      const r = rel ? `${rel}/${n}` : n;
      const k = await kindOf(join(dir, r));
      if (k === "dir") await walk(r, depth + 1);
      else if (k === "file" && r !== "requests.jsonl") out.push(r);
    }
  };
  await walk("", 0);
  return out;
}

/** Reads a journal dir tolerantly (a torn last line of requests.jsonl is counted and left out). */
export async function loadJournal(dir: string): Promise<JournalInput> {
  const file = join(dir, "requests.jsonl");
  let textIn = "";
  let lastWrite: string | null = null;
  const notes: string[] = [];
  try {
    textIn = await readFile(file, "utf8");
    lastWrite = new Date((await stat(file)).mtimeMs).toISOString();
  } catch (e) {
    notes.push(`requests.jsonl could not be read: ${(e as { code?: string }).code ?? (e as Error).message}`);
  }
  const lines = textIn.split("\n").filter((l) => l.trim());
  const rows = parseJsonl(textIn) as Obj[];
  return { kind: "journal", path: dir, id: basename(dir), rows, badLines: lines.length - rows.length, lastWrite, files: await stagedFiles(dir), notes };
}

