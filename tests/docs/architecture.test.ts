/**
 * docs/ARCHITECTURE.md stays true (issue 23 §1): every `lib/` folder it names exists, and every
 * folder under `lib/` (and under `lib/report/`) is named in it. In process, both runtimes.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { ROOT } from "../_helpers/ik.ts";

test("the architecture page names every lib/ folder, and only folders that exist", () => {
  const text = readFileSync(join(ROOT, "docs", "ARCHITECTURE.md"), "utf8");
  const named = new Set([...text.matchAll(/`lib\/([a-z][a-z0-9_]*)\/`/g)].map((m) => m[1]));
  for (const n of named) assert.ok(existsSync(join(ROOT, "lib", n)) && statSync(join(ROOT, "lib", n)).isDirectory(), `lib/${n}/ is named but does not exist`);
  const folders = readdirSync(join(ROOT, "lib")).filter((n) => statSync(join(ROOT, "lib", n)).isDirectory());
  for (const f of folders) assert.ok(named.has(f), `lib/${f}/ exists but the architecture page does not name it`);
  const sub = readdirSync(join(ROOT, "lib", "report")).filter((n) => statSync(join(ROOT, "lib", "report", n)).isDirectory());
  for (const f of sub) assert.ok(text.includes(`\`${f}/\``), `lib/report/${f}/ is not named`);
  assert.ok(folders.length >= 20);
});

/** Every .ts file under lib/, relative to the repo root. */
function libFiles(dir = join(ROOT, "lib"), out: string[] = []): string[] {
  for (const n of readdirSync(dir)) {
    const p = join(dir, n);
    if (statSync(p).isDirectory()) libFiles(p, out);
    else if (n.endsWith(".ts")) out.push(p);
  }
  return out;
}

test("no file under lib/ is over the 400 lines the architecture sets", () => {
  const over = libFiles()
    .map((p) => ({ p: p.slice(ROOT.length + 1), n: readFileSync(p, "utf8").split("\n").length - 1 }))
    .filter((f) => f.n > 400);
  assert.deepEqual(over, [], `over 400 lines: ${over.map((f) => `${f.p} (${f.n})`).join(", ")}`);
});

test("lib/'s file-level imports (type imports too) have no circle", () => {
  const files = libFiles();
  const graph = new Map<string, string[]>();
  const importRe = /(?:import|export)\s[^;]*?from\s+["'](\.{1,2}\/[^"']+)["']/gs;
  for (const p of files) {
    const src = readFileSync(p, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "");
    graph.set(p, [...src.matchAll(importRe)].map((m) => join(p, "..", m[1])).filter((d) => d.endsWith(".ts")));
  }
  // Depth-first search with colours: grey on the stack, black done; a grey target closes a circle.
  const colour = new Map<string, "grey" | "black">();
  const stack: string[] = [];
  const circles: string[] = [];
  const visit = (v: string): void => {
    colour.set(v, "grey");
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      const c = colour.get(w);
      if (c === "grey") circles.push([...stack.slice(stack.indexOf(w)), w].map((x) => x.slice(ROOT.length + 1)).join(" → "));
      else if (c === undefined) visit(w);
    }
    stack.pop();
    colour.set(v, "black");
  };
  for (const p of files) if (!colour.has(p)) visit(p);
  assert.ok(files.length > 200);
  assert.deepEqual(circles, [], `import circles: ${circles.join("; ")}`);
});
