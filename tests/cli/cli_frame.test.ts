/** The CLI frame through the compiled binary and through cli.ts: version, help, completions, usage errors. */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ikVariants, runArgv } from "../_helpers/ik.ts";

const COMMANDS = ["selftest", "probe", "mock"];

for (const v of ikVariants()) {
  describe(`ik CLI (${v.name})`, () => {
    const ik = (args: string[], env?: Record<string, string>) => runArgv(v.argv, args, { env, timeoutMs: 30_000 });

    test("--version prints version, revision, target and runtime; --json gives the same", async () => {
      const r = await ik(["--version"]);
      assert.equal(r.code, 0);
      assert.match(r.stdout, /^ik \d+\.\d+\.\d+ \(rev [\w-]+, target [\w-]+, runtime (bun|deno|node) [\d.]+(, flags [^)]+)?\)\n$/);
      const j = await ik(["--version", "--json"]);
      assert.equal(j.code, 0);
      const info = JSON.parse(j.stdout);
      assert.deepEqual(Object.keys(info).sort(), ["git_rev", "name", "runtime", "runtime_flags", "target", "version"]);
      assert.ok(r.stdout.includes(`rev ${info.git_rev}`) && r.stdout.includes(`runtime ${info.runtime}`));
      if (v.name === "binary") assert.match(info.target, /^(bun|node)-linux-(x64|arm64)/);
      // The Bun binary carries --smol (its memory figures depend on it); the Node build has no flags.
      if (v.name === "binary") assert.equal(info.runtime_flags, info.target.startsWith("bun-") ? "--smol" : "");
      if (info.runtime_flags) assert.ok(r.stdout.includes(`, flags ${info.runtime_flags})`), r.stdout);
    });

    test("--help lists every command and exits 0", async () => {
      const r = await ik(["--help"]);
      assert.equal(r.code, 0);
      for (const c of COMMANDS) assert.match(r.stdout, new RegExp(`^\\s+${c}\\s`, "m"), c);
    });

    for (const c of COMMANDS) {
      test(`${c} --help exits 0 with its usage`, async () => {
        const r = await ik([c, "--help"]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(r.stdout, new RegExp(`Usage: ik ${c}`));
      });
    }

    for (const shell of ["bash", "zsh", "fish"]) {
      test(`completion ${shell} prints a script that names the commands`, async () => {
        const r = await ik(["completion", shell]);
        assert.equal(r.code, 0, r.stderr);
        assert.ok(r.stdout.length > 200);
        assert.match(r.stdout, /\bik\b/);
      });
    }

    test("an unknown command is a one-line usage error (64) naming the word", async () => {
      const r = await ik(["frobnicate"]);
      assert.equal(r.code, 64);
      assert.equal(r.stdout, "");
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, /^ik: .*`frobnicate`.*; see 'ik --help'\n$/);
    });

    test("an unknown flag is a one-line usage error (64) naming the flag, no stack trace", async () => {
      const r = await ik(["mock", "--no-such-flag", "3"]);
      assert.equal(r.code, 64);
      assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
      assert.match(r.stderr, /--no-such-flag/);
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    });

    test("an empty path is a usage error (64) naming the flag or argument, before anything is read or written", async () => {
      for (const [args, name, what] of [
        [["prompts", "synth", "--bucket", "a:16:8", "--out="], "--out", "file"],
        [["bench", "points", "--base", "http://127.0.0.1:9", "--model", "m", "--plan", "", "--out", "x"], "--plan", "file"],
        [["export", "--format", "csv", "--out", "", "x"], "--out", "folder"],
        [["report", ""], "RECORD\\|RUN_DIR", "record or run dir"],
        [["bench", "rounds", ""], "MANIFEST", "manifest file"],
      ] as const) {
        const r = await ik([...args]);
        assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
        assert.equal(r.stderr.trim().split("\n").length, 1, r.stderr);
        assert.match(r.stderr, new RegExp(`\`${name}\`: is empty: give a ${what}`), r.stderr);
      }
    });
  });
}
