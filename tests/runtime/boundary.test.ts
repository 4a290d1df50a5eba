/** ARCHITECTURE.md convention 1: only lib/runtime/ (and cli.ts) may name Deno, Bun or the global process. */
import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "node:test";
import { ROOT } from "../_helpers/ik.ts";

function walk(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else if (p.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Strips comments and string literals so prose like "Bun merges writes" does not count. */
function code(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/\/\/.*$/gm, "")
    .replace(/(["'`])(?:\\.|(?!\1)[^\\\n])*\1/g, '""');
}

const FORBIDDEN = /\b(?:Deno|Bun)\s*\.|(?<![.\w])process\s*\.|globalThis\s*\.\s*(?:Deno|Bun|process)\b/;

test("Deno., Bun. and the global process appear only in lib/runtime/ and cli.ts", () => {
  const files = [...walk(join(ROOT, "lib")), join(ROOT, "mod.ts")]
    .filter((p) => !relative(ROOT, p).startsWith("lib/runtime/"));
  assert.ok(files.length > 5, "found the sources");
  const leaks = files.flatMap((p) =>
    code(readFileSync(p, "utf8")).split("\n").flatMap((line, i) =>
      FORBIDDEN.test(line) ? [`${relative(ROOT, p)}:${i + 1}: ${line.trim()}`] : []
    )
  );
  assert.deepEqual(leaks, []);
});

test("the boundary check itself catches a leak", () => {
  for (const bad of ["Deno.serve(x)", "Bun.serve({})", "const a = process.env.X", "globalThis.Bun"]) {
    assert.ok(FORBIDDEN.test(code(bad)), bad);
  }
  for (const ok of ["// Bun.serve in a comment", 'const s = "Deno.exit"', "child.process.pid", "runtime.env('X')"]) {
    assert.ok(!FORBIDDEN.test(code(ok)), ok);
  }
});
