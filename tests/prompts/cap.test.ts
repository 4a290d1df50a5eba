/**
 * The prompt-set cap (CONTRACTS.md "Limits": 1 GiB decompressed, else data error 65): a gzip bomb
 * is stopped at the cap while streaming, never inflated whole; a plain file over the cap is refused
 * from its size. Budget: < 1 s, plus ~5 s for the real 1.1 GiB bomb (Bun only).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  rmSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { after, test } from "node:test";
import { formatErrorLine, IkError } from "../../lib/cli/errors.ts";
import { MAX_PROMPT_SET_BYTES } from "../../lib/cli/limits.ts";
import { formatLimit, readUncompressedCapped } from "../../lib/prompts/_read_capped.ts";
import { type LoadOptions, loadPromptSet, maybeGunzip } from "../../lib/prompts/mod.ts";
import { runtime } from "../../lib/runtime/mod.ts";
import { ROOT } from "../_helpers/ik.ts";

const dir = mkdtempSync(join(tmpdir(), "ik-prompts-cap-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const KIB = 1024;
const CAP = 64 * KIB;

function write(name: string, content: string | Uint8Array): string {
  const f = join(dir, name);
  writeFileSync(f, content);
  return f;
}

async function failure(path: string, opts: LoadOptions = {}): Promise<{ code: number; line: string }> {
  try {
    await loadPromptSet(path, opts);
  } catch (e) {
    assert.ok(e instanceof IkError, String(e));
    return { code: e.code, line: formatErrorLine(e.where, e.message, e.hint) };
  }
  assert.fail(`${path} loaded without error`);
}

/** Valid JSONL of exactly `bytes` bytes: prompts whose content pads the last one to size. */
function setOfSize(bytes: number): string {
  const line = (i: number, pad: number) =>
    JSON.stringify({ id: `p${i}`, bucket: "short", messages: [{ role: "user", content: "x".repeat(pad) }] }) +
    "\n";
  let text = "";
  let i = 0;
  while (bytes - text.length > 2 * KIB) text += line(i++, 1000);
  const rest = bytes - text.length - line(i, 0).length;
  return text + line(i, rest);
}

test("limits are named as people read them", () => {
  assert.equal(formatLimit(MAX_PROMPT_SET_BYTES), "1 GiB");
  assert.equal(formatLimit(CAP), "64 KiB");
  assert.equal(formatLimit(3 * 2 ** 20), "3 MiB");
  assert.equal(formatLimit(1000), "1000 bytes");
});

test("a .jsonl.gz that inflates past the cap: data error naming the file and the limit, stopped at the cap", async () => {
  const bomb = write("bomb.jsonl.gz", gzipSync(new Uint8Array(16 * 2 ** 20).fill(0x20)));
  const got = await failure(bomb, { maxBytes: CAP });
  assert.equal(got.code, 65);
  assert.equal(
    got.line,
    "ik: bomb.jsonl.gz: decompresses to more than 64 KiB, the limit for a prompt set; split it into smaller sets",
  );
  // The stream itself never hands out more than the cap before it refuses.
  let seen = 0;
  await assert.rejects(async () => {
    for await (const c of readUncompressedCapped(bomb, { maxBytes: CAP })) seen += c.length;
  }, (e) => e instanceof IkError && e.code === 65);
  assert.ok(seen <= CAP, `${seen} bytes inflated past the ${CAP}-byte cap`);
  // the same through an injected reader
  const injected = await failure(bomb, {
    maxBytes: CAP,
    readBytes: () => Promise.resolve(gzipSync(" ".repeat(CAP + 1))),
  });
  assert.equal(injected.code, 65);
  assert.match(injected.line, /decompresses to more than 64 KiB/);
});

test("exactly the cap loads; one byte more does not (gzip, multi-member and plain)", async () => {
  const exact = setOfSize(CAP);
  assert.equal(exact.length, CAP);
  const over = exact + "\n";
  const half = exact.indexOf("\n", CAP / 2) + 1;
  const members = (t: string) => new Uint8Array([...gzipSync(t.slice(0, half)), ...gzipSync(t.slice(half))]);
  for (
    const [name, bytes] of [
      ["gz", (t: string) => gzipSync(t)],
      ["multi", members],
      ["plain", (t: string) => new TextEncoder().encode(t)],
    ] as const
  ) {
    const ext = name === "plain" ? "jsonl" : "jsonl.gz";
    const ok = await loadPromptSet(write(`exact-${name}.${ext}`, bytes(exact)), { maxBytes: CAP });
    assert.ok(ok.prompts.length > 10, name);
    const bad = await failure(write(`over-${name}.${ext}`, bytes(over)), { maxBytes: CAP });
    assert.equal(bad.code, 65, name);
    assert.match(
      bad.line,
      new RegExp(`^ik: over-${name}\\.${ext.replace(".", "\\.")}: .*64 KiB.*limit for a prompt set`),
      name,
    );
  }
});

test("a plain .jsonl over the cap is refused from its size, before it is read", async () => {
  // A sparse 2 GiB file: reading it would take seconds and 2 GiB; stat takes nothing.
  const f = join(dir, "huge.jsonl");
  writeFileSync(f, '{"id":');
  truncateSync(f, 2 * 2 ** 30);
  const t0 = performance.now();
  const got = await failure(f);
  assert.equal(got.code, 65);
  assert.equal(
    got.line,
    "ik: huge.jsonl: is 2147483648 bytes, over the 1 GiB limit for a prompt set; split it into smaller sets",
  );
  assert.ok(performance.now() - t0 < 1000, "refused without reading");
  const injected = await failure(f, {
    maxBytes: CAP,
    readBytes: () => Promise.resolve(new Uint8Array(CAP + 1).fill(0x0a)),
  });
  assert.match(injected.line, /is 65537 bytes, over the 64 KiB limit/);
});

test("maybeGunzip (bytes in memory) stops at its cap too", () => {
  const gz = gzipSync(" ".repeat(CAP + 1));
  assert.throws(() => maybeGunzip(gz, CAP), RangeError);
  assert.equal(maybeGunzip(gz, CAP + 1).length, CAP + 1);
});

// The real thing: a 1.125 GiB bomb (a 16 MiB block of blank lines, gzipped once and written 72
// times: a 72-member gzip of ~1.2 MB, built in well under a second) loaded in a child under
// `prlimit --as=768M`. The streaming loader peaks near 80 MB; holding the inflated set (1.1 GiB)
// cannot fit. Bun only: Bun runs within 384 MiB of address space, but Deno (V8) reserves tens of
// GiB of it up front and will not start under any --as that could catch a 1 GiB allocation; the
// peak RSS (VmHWM) check below would catch it there, but the suite runs heavy cases on Bun only.
const BUN = join(ROOT, "node_modules/.bin/bun");
const hasPrlimit = spawnSync("prlimit", ["--version"]).status === 0;
test("a real 1.1 GiB gzip bomb is refused at 1 GiB in a child limited to 768 MiB of address space", {
  skip: runtime.name !== "bun"
    ? "heavy: Bun only (Deno's V8 reserves more address space than prlimit --as could allow)"
    : !hasPrlimit
    ? "prlimit is not installed (util-linux)"
    : !existsSync(BUN)
    ? `no ${BUN}`
    : false,
}, () => {
  const bomb = join(dir, "bomb-1g.jsonl.gz");
  const block = new Uint8Array(16 * 2 ** 20).fill(0x20);
  for (let i = 1023; i < block.length; i += 1024) block[i] = 0x0a;
  const member = gzipSync(block, { level: 9 });
  const fd = openSync(bomb, "w");
  for (let i = 0; i < 72; i++) writeSync(fd, member);
  closeSync(fd);
  const child = spawnSync(
    "prlimit",
    [`--as=${768 * 2 ** 20}`, BUN, join(ROOT, "tests/prompts/_fixtures/load_set.ts"), bomb],
    { encoding: "utf8", timeout: 30_000 },
  );
  const out = child.stdout.trim().split("\n").at(-1) ?? "";
  assert.ok(
    out.startsWith("{"),
    `the loader survived (status ${child.status}, ${child.signal}): ${child.stderr.slice(-400)}`,
  );
  const r = JSON.parse(out);
  assert.equal(r.code, 65, out);
  assert.equal(
    r.line,
    "ik: bomb-1g.jsonl.gz: decompresses to more than 1 GiB, the limit for a prompt set; split it into smaller sets",
  );
  assert.ok(r.peak_rss_kib > 0 && r.peak_rss_kib < 400 * 1024, `peak RSS ${r.peak_rss_kib} KiB`);
});
