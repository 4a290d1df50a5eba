/**
 * The release files in dist/ (npm run release): checksums, CPU, and what each binary says it is, natively
 * and under qemu-aarch64-static. Skips when they are not built: npm test does not build them;
 * .ci/qemu_check.sh builds them and runs this file again.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import { runArgv, startArgv } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { elfMachine } from "../../scripts/sizes.ts";
import { HOST_CPU, qemuArm64, ROOT } from "./_release_helpers.ts";

const DIST = join(ROOT, "dist");
const T = { timeout: 120_000 };
const files = existsSync(DIST) ? readdirSync(DIST).filter((f) => /^ik-linux-/.test(f) && !f.startsWith(".")).sort() : [];
const NOT_BUILT = "dist/ik-linux-* not built: run `npm run release` (CI: .ci/qemu_check.sh builds them and reruns this)";
const skipUnless = (ok: boolean, why: string) => (ok ? false : why);
if (files.length === 0) runtime.writeStderr(`tests/release/artifacts.test.ts: skipped, ${NOT_BUILT}\n`);
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const bunVersion = existsSync(join(ROOT, "node_modules", "bun", "package.json"))
  ? JSON.parse(readFileSync(join(ROOT, "node_modules", "bun", "package.json"), "utf8")).version
  : null;

/** What each release file must be. */
const EXPECT: Record<string, { machine: string; target: string; runtime: RegExp }> = {
  "ik-linux-x64": { machine: "x86-64", target: "bun-linux-x64", runtime: /^bun \d/ },
  "ik-linux-x64-baseline": { machine: "x86-64", target: "bun-linux-x64-baseline", runtime: /^bun \d/ },
  "ik-linux-arm64": { machine: "aarch64", target: "bun-linux-arm64", runtime: /^bun \d/ },
  "ik-linux-arm64-node": { machine: "aarch64", target: "node-linux-arm64", runtime: /^node \d+\.\d+\.\d+$/ },
};

function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

async function versionOf(argv: string[]): Promise<{ line: string; info: Record<string, string> }> {
  const a = await runArgv(argv, ["--version"], { timeoutMs: 100_000 });
  assert.equal(a.code, 0, `${argv.join(" ")} --version: ${a.stderr}`);
  const b = await runArgv(argv, ["--version", "--json"], { timeoutMs: 100_000 });
  assert.equal(b.code, 0, `${argv.join(" ")} --version --json: ${b.stderr}`);
  return { line: a.stdout, info: JSON.parse(b.stdout) };
}

function checkVersion(file: string, v: { line: string; info: Record<string, string> }): void {
  const e = EXPECT[file];
  assert.equal(v.info.name, "ik");
  assert.equal(v.info.version, pkg.version);
  assert.equal(v.info.target, e.target);
  assert.match(v.info.runtime, e.runtime);
  if (e.runtime.source.startsWith("^bun") && bunVersion) assert.equal(v.info.runtime, `bun ${bunVersion}`);
  assert.match(v.info.git_rev, /^([0-9a-f]{12}(-dirty)?|unknown)$/);
  // The Bun builds run with --smol built in (scripts/build.sh); the Node builds with no runtime flag.
  assert.equal(v.info.runtime_flags, e.target.startsWith("bun-") ? "--smol" : "");
  const flags = v.info.runtime_flags ? `, flags ${v.info.runtime_flags}` : "";
  assert.equal(v.line, `ik ${v.info.version} (rev ${v.info.git_rev}, target ${v.info.target}, runtime ${v.info.runtime}${flags})\n`);
}

describe("release files in dist/", () => {
  test("every release file is one we expect, and the set is complete", { skip: skipUnless(files.length > 0, NOT_BUILT) }, () => {
    for (const f of files) assert.ok(f in EXPECT, `unexpected dist/${f}`);
    for (const f of ["ik-linux-x64", "ik-linux-arm64", "ik-linux-arm64-node"]) assert.ok(files.includes(f), `dist/${f} missing`);
  });

  test("SHA256SUMS lists exactly the release files, in sha256sum -c format, and matches them", {
    ...T,
    skip: skipUnless(files.length > 0, NOT_BUILT),
  }, () => {
    const text = readFileSync(join(DIST, "SHA256SUMS"), "utf8");
    assert.match(text, /^([0-9a-f]{64} {2}ik-linux-[\w-]+\n)+$/);
    const listed = text.trim().split("\n").map((l) => [l.slice(66), l.slice(0, 64)] as const);
    assert.deepEqual(listed.map(([f]) => f), files);
    for (const [f, hash] of listed) assert.equal(sha256(join(DIST, f)), hash, `dist/${f} does not match SHA256SUMS`);
  });

  test("each file is an ELF executable for its CPU", { skip: skipUnless(files.length > 0, NOT_BUILT) }, () => {
    for (const f of files) assert.equal(elfMachine(join(DIST, f)), EXPECT[f].machine, f);
  });

  for (const f of files.filter((x) => EXPECT[x] && (EXPECT[x].machine === "x86-64") === (HOST_CPU === "x64"))) {
    test(`${f} runs natively and reports its version, revision, target and runtime`, T, async () => {
      checkVersion(f, await versionOf([join(DIST, f)]));
    });
  }

  const qemu = qemuArm64();
  for (const f of files.filter((x) => EXPECT[x]?.machine === "aarch64")) {
    test(`${f} under qemu-aarch64-static reports its target`, {
      ...T,
      skip: skipUnless(qemu !== null && HOST_CPU === "x64", "qemu-aarch64-static or /usr/aarch64-linux-gnu missing (see .ci/qemu_check.sh)"),
    }, async () => {
      checkVersion(f, await versionOf([...qemu!, join(DIST, f)]));
    });
  }

  test("ik-linux-arm64-node runs with 64 KB pages (qemu -p 65536), where Bun aborts", {
    ...T,
    skip: skipUnless(
      files.includes("ik-linux-arm64-node") && qemuArm64() !== null && HOST_CPU === "x64",
      files.length ? "qemu-aarch64-static missing" : NOT_BUILT,
    ),
  }, async () => {
    const q = qemuArm64()!;
    checkVersion("ik-linux-arm64-node", await versionOf([q[0], "-p", "65536", ...q.slice(1), join(DIST, "ik-linux-arm64-node")]));
  });

  test("all files were built from the same source", { ...T, skip: skipUnless(files.length > 0, NOT_BUILT) }, async () => {
    const qemu = qemuArm64();
    const revs = new Set<string>();
    for (const f of files) {
      const native = (EXPECT[f].machine === "x86-64") === (HOST_CPU === "x64");
      if (!native && (!qemu || HOST_CPU !== "x64")) continue;
      const { info } = await versionOf(native ? [join(DIST, f)] : [...qemu!, join(DIST, f)]);
      revs.add(`${info.version} ${info.git_rev}`);
    }
    assert.equal(revs.size, 1, [...revs].join(" / "));
  });

  // End to end through the Node build: dist/ik-node is this host's Node single executable
  // (bun scripts/release.ts --host-node-only); the arm64 one gets the same check under qemu in .ci/qemu_check.sh.
  const hostNode = join(DIST, "ik-node");
  const natives = [
    ...files.filter((x) => EXPECT[x] && (EXPECT[x].machine === "x86-64") === (HOST_CPU === "x64")).map((f) => join(DIST, f)),
    ...(existsSync(hostNode) ? [hostNode] : []),
  ];
  for (const bin of natives) {
    test(`${bin.slice(DIST.length + 1)}: ik mock on 127.0.0.1 streams a chat completion to the end`, T, async () => {
      const help = await runArgv([bin], ["mock", "--help"], { timeoutMs: 30_000 });
      if (help.code !== 0 || !help.stdout.includes("--port")) return; // ik mock not built in this tree yet
      const mock = startArgv([bin], ["mock", "--port", "0", "--ttft-ms", "5", "--tpot-ms", "2"]);
      try {
        const port = Number((await mock.waitFor(/ik mock: listening on http:\/\/127\.0\.0\.1:(\d+)/, 30_000))[1]);
        const r = await fetch(`http://127.0.0.1:${port}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ model: "mock-model", messages: [{ role: "user", content: "hi" }], max_tokens: 8, stream: true }),
        });
        assert.equal(r.status, 200);
        assert.match(r.headers.get("content-type") ?? "", /^text\/event-stream/);
        const text = await r.text();
        assert.match(text, /^data: \[DONE\]$/m);
        assert.ok((text.match(/^data: /gm)?.length ?? 0) >= 3, text.slice(0, 300));
      } finally {
        const end = await mock.stop("SIGTERM");
        assert.ok(end.code !== null || end.signal === "SIGTERM", JSON.stringify(end));
      }
    });
  }
});
