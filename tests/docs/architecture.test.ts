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
  const named = new Set([...text.matchAll(/`lib\/([a-z_]+)\/`/g)].map((m) => m[1]));
  for (const n of named) assert.ok(existsSync(join(ROOT, "lib", n)) && statSync(join(ROOT, "lib", n)).isDirectory(), `lib/${n}/ is named but does not exist`);
  const folders = readdirSync(join(ROOT, "lib")).filter((n) => statSync(join(ROOT, "lib", n)).isDirectory());
  for (const f of folders) assert.ok(named.has(f), `lib/${f}/ exists but the architecture page does not name it`);
  const sub = readdirSync(join(ROOT, "lib", "report")).filter((n) => statSync(join(ROOT, "lib", "report", n)).isDirectory());
  for (const f of sub) assert.ok(text.includes(`\`${f}/\``), `lib/report/${f}/ is not named`);
  assert.ok(folders.length >= 20);
});
