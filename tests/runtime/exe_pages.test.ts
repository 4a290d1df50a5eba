/**
 * Handing the executable's start-up pages back (lib/runtime/_exe_pages.ts): which mappings are
 * chosen from /proc/self/smaps (only the executable's own, private, not writable, with no
 * copy-on-write page: dropping one that was written would lose what was written), and the
 * runtime's call (bun:ffi or Deno.dlopen madvise) really takes the pages out of this process's
 * resident set while the process goes on running the same code.
 */
import assert from "node:assert/strict";
import { readFileSync, realpathSync } from "node:fs";
import { describe, test } from "node:test";
import { MADV_DONTNEED, releasableMappings, releaseExePages } from "../../lib/runtime/_exe_pages.ts";
import { runtime } from "../../lib/runtime/mod.ts";

const EXE = "/opt/ik/bin/ik";
const map = (range: string, perms: string, off: string, path: string, rss: number, anon: number | null) =>
  [`${range} ${perms} ${off} 08:01 1234567                    ${path}`, `Size:              9000 kB`, `Rss:               ${rss} kB`, `Pss:               ${rss} kB`,
    ...(anon === null ? [] : [`Anonymous:         ${anon} kB`]), `VmFlags: rd mr mw me`].join("\n");
const anonMap = (range: string, rss: number) => [`${range} rw-p 00000000 00:00 0 `, `Rss:               ${rss} kB`, `Anonymous:         ${rss} kB`].join("\n");

describe("the executable's pages", () => {
  test("only the executable's private, read-only mappings with no anonymous page are chosen", () => {
    const smaps = [
      map("00200000-01a39000", "r--p", "00000000", EXE, 6948, 0),
      map("01a40000-0684a000", "r-xp", "01838000", EXE, 36648, 0),
      // JavaScriptCore's config page: written, then sealed read-only: holds an anonymous page.
      map("06867000-06868000", "r--p", "0665e000", EXE, 4, 4),
      map("06868000-070e7000", "rw-p", "0665f000", EXE, 5492, 120),
      map("070e7000-070e8000", "rw-p", "06ede000", EXE, 4, 0),
      map("7f0000000000-7f0000100000", "r-xp", "00026000", "/usr/lib/x86_64-linux-gnu/libc.so.6", 1112, 0),
      map("7f0000200000-7f0000300000", "r--s", "00000000", EXE, 100, 0),
      map("7f0000400000-7f0000500000", "r--p", "00000000", EXE + " (deleted)", 100, 0),
      map("7f0000600000-7f0000700000", "r--p", "00000000", EXE, 100, null),
      anonMap("56772200000-567b2200000", 39436),
      // The last mapping of the executable, then a nameless one printed without the trailing space:
      // its Anonymous line must not be read as the executable's.
      map("7f0000800000-7f0000900000", "r--p", "00000000", EXE, 200, 0),
      anonMap("7f0000a00000-7f0000b00000", 300).replace("00:00 0 \n", "00:00 0\n"),
    ].join("\n") + "\n";
    const got = releasableMappings(smaps, EXE);
    assert.deepEqual(got.map((m) => [m.start.toString(16), m.length.toString(16), m.perms, m.rssKb]), [
      ["200000", "1839000", "r--p", 6948],
      ["1a40000", "4e0a000", "r-xp", 36648],
      ["7f0000800000", "100000", "r--p", 200],
    ]);
  });

  test("not on Linux, or a madvise that fails, is said, not hidden", () => {
    let opened = 0, closed = 0;
    const calls: number[] = [];
    const failing = () => (opened++, { call: (_a: bigint, _l: bigint, advice: number) => (calls.push(advice), -1), close: () => void closed++ });
    assert.match(String((releaseExePages("darwin", failing) as { reason: string }).reason), /Linux only/);
    assert.equal(opened, 0, "nothing opened where there is nothing to do");
    if (process.platform !== "linux") return;
    assert.deepEqual(releaseExePages("linux", () => "no libc could be opened"), { reason: "no libc could be opened" });
    const r = releaseExePages("linux", failing, realpathSync("/proc/self/exe"));
    if ("reason" in r) return assert.fail(r.reason);
    assert.equal(r.mappings, 0);
    assert.equal(r.rssKb, 0);
    assert.ok(r.failed >= 1 && calls.every((a) => a === MADV_DONTNEED), JSON.stringify({ r, calls }));
    assert.deepEqual([opened, closed], [1, 1], "opened once, closed once");
  });

  test("the runtime's madvise takes the pages out of the resident set, and the process runs on", { skip: process.platform !== "linux" ? "Linux only" : false }, () => {
    const exe = realpathSync("/proc/self/exe");
    const resident = () => releasableMappings(readFileSync("/proc/self/smaps", "utf8"), exe).reduce((a, m) => a + m.rssKb, 0);
    const before = resident();
    const r = runtime.releaseExePages();
    const after = resident();
    if (runtime.name === "node") return assert.ok("reason" in r, JSON.stringify(r));
    if ("reason" in r) return assert.fail(r.reason);
    assert.ok(r.mappings >= 1 && r.failed === 0, JSON.stringify(r));
    // The runtime had tens of MB of its file resident; what this test ran since maps back, a small part of it.
    assert.ok(before > 8192 && r.rssKb > 8192, JSON.stringify({ before, r }));
    assert.ok(after < before / 2, `resident ${before} kB before, ${after} kB after`);
    // The same code goes on running (it maps back on a minor fault).
    assert.equal(JSON.parse(JSON.stringify({ a: [1, 2, 3] })).a.length, 3);
  });
});
