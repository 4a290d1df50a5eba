/** Server text printed for a person cannot drive the terminal. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeTerminal, escapeTerminalLine } from "../../lib/report/escape.ts";

test("escape sequences and control characters become visible; text stays", () => {
  assert.equal(escapeTerminal("\u001b[31mred\u001b[0m"), "\\e[31mred\\e[0m");
  assert.equal(escapeTerminal("a\rb\u0007c\u009bd"), "a\\rb\\x07c\\x9bd");
  assert.equal(escapeTerminal("x\u202ey"), "x\\u202ey");
  assert.equal(escapeTerminal("héllo\tworld\n日本"), "héllo\tworld\n日本");
  assert.equal(escapeTerminalLine("a\nb\tc\u001b"), "a\\nb\\tc\\e");
});
