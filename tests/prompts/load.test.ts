/** Prompt sets (seed 002 prompts_io.py): JSONL and .jsonl.gz, validation naming file:line, selection, identity. */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { after, test } from "node:test";
import { formatErrorLine, IkError } from "../../lib/cli/errors.ts";
import { asCompletionPrompt, loadPromptSet, setBuckets, setStem } from "../../lib/prompts/mod.ts";

const dir = mkdtempSync(join(tmpdir(), "ik-prompts-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const line = (o: Record<string, unknown>) => JSON.stringify(o);
const p = (id: string, bucket: string, extra: Record<string, unknown> = {}) =>
  line({
    id,
    bucket,
    messages: [{ role: "system", content: "S" }, { role: "user", content: `Q ${id}` }],
    max_tokens: 16,
    ...extra,
  });
const GOOD = [
  p("s1", "short"),
  p("l1", "long", { source: "x/cc-by", kind: "chat" }),
  "",
  p("s2", "short", { max_tokens: null }),
  p("m1", "medium"),
].join("\n") + "\n";

function write(name: string, content: string | Uint8Array): string {
  const f = join(dir, name);
  writeFileSync(f, content);
  return f;
}

async function failure(path: string, opts = {}): Promise<{ code: number; line: string }> {
  try {
    await loadPromptSet(path, opts);
  } catch (e) {
    assert.ok(e instanceof IkError, String(e));
    return { code: e.code, line: formatErrorLine(e.where, e.message, e.hint) };
  }
  assert.fail(`${path} loaded without error`);
}

test("a JSONL set: prompts in file order, fields, extra kept, identity is the sha256 of the bytes", async () => {
  const f = write("dev.jsonl", GOOD);
  const set = await loadPromptSet(f);
  assert.equal(set.name, "dev");
  assert.equal(set.sha256, createHash("sha256").update(GOOD).digest("hex"));
  assert.deepEqual(set.prompts.map((x) => x.id), ["s1", "l1", "s2", "m1"]);
  assert.equal(set.prompts[0].maxTokens, 16);
  assert.equal(set.prompts[2].maxTokens, null);
  assert.deepEqual(set.prompts[1].extra, { source: "x/cc-by" });
  assert.equal(set.prompts[1].kind, "chat");
  assert.equal(asCompletionPrompt(set.prompts[0]), "S\n\nQ s1");
  assert.deepEqual(setBuckets(set), ["short", "medium", "long"]);
  assert.equal(set.manifest, null);
});

test(".jsonl.gz, also with several gzip members, has the same identity as the plain file", async () => {
  const plain = await loadPromptSet(write("same.jsonl", GOOD));
  const gz = await loadPromptSet(write("one.jsonl.gz", gzipSync(GOOD)));
  const half = GOOD.indexOf("\n", GOOD.length / 2) + 1;
  const multi = new Uint8Array([...gzipSync(GOOD.slice(0, half)), ...gzipSync(GOOD.slice(half))]);
  const mm = await loadPromptSet(write("multi.jsonl.gz", multi));
  assert.equal(gz.sha256, plain.sha256);
  assert.equal(mm.sha256, plain.sha256);
  assert.equal(mm.prompts.length, 4);
  assert.equal(gz.name, "one");
  assert.equal(setStem("/a/b/x.jsonl.gz"), "x");
});

test("the .gz variant is found when the plain name is given, and vice versa", async () => {
  write("only-gz.jsonl.gz", gzipSync(GOOD));
  assert.equal((await loadPromptSet(join(dir, "only-gz.jsonl"))).prompts.length, 4);
  write("only-plain.jsonl", GOOD);
  assert.equal((await loadPromptSet(join(dir, "only-plain.jsonl.gz"))).prompts.length, 4);
});

test("bucket selection and a per-bucket limit keep file order", async () => {
  const f = write("sel.jsonl", GOOD);
  assert.deepEqual((await loadPromptSet(f, { buckets: ["short"] })).prompts.map((x) => x.id), ["s1", "s2"]);
  assert.deepEqual((await loadPromptSet(f, { limitPerBucket: 1 })).prompts.map((x) => x.id), [
    "s1",
    "l1",
    "m1",
  ]);
  const none = await failure(f, { buckets: ["huge"] });
  assert.equal(none.code, 65);
  assert.match(none.line, /no prompts in buckets huge/);
});

test("every bad line is a data error (65) naming file:line and the field", async () => {
  const cases: [string, RegExp][] = [
    ["{not json", /^ik: bad\.jsonl:2: not JSON/],
    ["[1,2]", /bad\.jsonl:2: each line must be a JSON object/],
    [
      line({ bucket: "b", messages: [{ role: "user" }] }),
      /bad\.jsonl:2: 'id' must be a non-empty string without '\/'/,
    ],
    [line({ id: "a/b", bucket: "b", messages: [{ role: "user" }] }), /'id' must be/],
    [line({ id: ".hidden", bucket: "b", messages: [{ role: "user" }] }), /'id' must be/],
    [line({ id: "x", bucket: "", messages: [{ role: "user" }] }), /'bucket' must be/],
    // "all" is every request together in the tables: a bucket of that name was merged into it.
    [line({ id: "x", bucket: "all", messages: [{ role: "user", content: "hi" }] }), /bad\.jsonl:2: 'bucket' "all" is the name of every request together in ik's tables; give this bucket another name/],
    [line({ id: "x", bucket: "b", messages: [] }), /'messages' must be a non-empty list/],
    [line({ id: "x", bucket: "b", messages: [{ content: "no role" }] }), /'messages' must be/],
    [
      line({ id: "x", bucket: "b", messages: [{ role: "user" }], max_tokens: 0 }),
      /bad\.jsonl:2: 'max_tokens' must be a positive integer/,
    ],
    [line({ id: "x", bucket: "b", messages: [{ role: "user" }], max_tokens: 2.5 }), /'max_tokens'/],
    [line({ id: "x", bucket: "b", messages: [{ role: "user" }], max_tokens: true }), /'max_tokens'/],
    [p("s1", "short"), /bad\.jsonl:2: duplicate id 's1'/],
  ];
  for (const [bad, re] of cases) {
    const f = write("bad.jsonl", p("s1", "short") + "\n" + bad + "\n");
    const got = await failure(f);
    assert.equal(got.code, 65, bad);
    assert.match(got.line, re, bad);
  }
});

test("unreadable files: corrupt gzip, not UTF-8, empty; a missing file is a usage error (64)", async () => {
  const gz = gzipSync(GOOD);
  const corrupt = await failure(write("cut.jsonl.gz", gz.subarray(0, gz.length - 10)));
  assert.equal(corrupt.code, 65);
  assert.match(corrupt.line, /^ik: cut\.jsonl\.gz: cannot read/);
  assert.equal((await failure(write("latin1.jsonl", new Uint8Array([0x7b, 0xe9, 0x7d, 0x0a])))).code, 65);
  assert.match((await failure(write("empty.jsonl", "\n\n"))).line, /no prompts/);
  const missing = await failure(join(dir, "nope.jsonl"));
  assert.equal(missing.code, 64);
  assert.match(missing.line, /not found/);
  // A folder is named as one; the flag is the caller's; a builtin: name that is not the built-in set says which is.
  const folder = await failure(dir, { flag: "FILE" });
  assert.equal(folder.code, 64);
  assert.match(folder.line, /^ik: FILE: .* is a folder, not a prompt set file/);
  // A device (or a pipe) is there, and not a file: said so, not "not found".
  if (existsSync("/dev/null")) assert.match((await failure("/dev/null")).line, /^ik: --prompts: \/dev\/null is not a file; give a prompt set file/);
  assert.match((await failure(join(dir, "builtin:nope"))).line, /^ik: --prompts: prompt set builtin:nope not found; the built-in set is builtin:default/);
  // A file this user cannot read is a usage error saying so (not "corrupt"); root reads everything.
  const locked = write("locked.jsonl", GOOD);
  chmodSync(locked, 0o000);
  const asRoot = typeof process.getuid === "function" && process.getuid() === 0;
  if (!asRoot) {
    const denied = await failure(locked);
    assert.equal(denied.code, 64);
    assert.match(denied.line, /cannot read .*locked\.jsonl \(permission denied\)/);
  }
});

test("a manifest names the set and guards its sha256", async () => {
  const f = write("named.jsonl", GOOD);
  const sha = createHash("sha256").update(GOOD).digest("hex");
  write("named.manifest.json", JSON.stringify({ name: "dev-v2", sha256: sha }));
  const set = await loadPromptSet(f);
  assert.equal(set.name, "dev-v2");
  assert.equal(set.manifest?.sha256, sha);
  write("named.manifest.json", JSON.stringify({ name: "dev-v2", sha256: "0".repeat(64) }));
  const bad = await failure(f);
  assert.equal(bad.code, 65);
  assert.match(bad.line, /does not match its manifest/);
});

test("a BOM and CRLF line ends are accepted", async () => {
  const set = await loadPromptSet(write("crlf.jsonl", "\ufeff" + GOOD.replace(/\n/g, "\r\n")));
  assert.equal(set.prompts.length, 4);
});

test("a set that is not UTF-8 names the line of the bad byte (65), gzipped and past the first chunk too", async () => {
  const bad = new Uint8Array([0xff, 0xfe, 0x0a]);
  const cat = (...parts: (string | Uint8Array)[]) => Buffer.concat(parts.map((x) => typeof x === "string" ? Buffer.from(x) : x));
  const two = await failure(write("p10.jsonl", cat(p("a", "short") + "\n", bad)));
  assert.equal(two.code, 65);
  assert.equal(two.line, "ik: p10.jsonl:2: not UTF-8 text (a byte sequence that is not UTF-8); save the prompt set as UTF-8");
  assert.match((await failure(write("p10.jsonl.gz", gzipSync(cat(p("a", "short") + "\n", bad))))).line, /^ik: p10\.jsonl\.gz:2: not UTF-8 text/);
  // 6000 lines (well over one read chunk) before a line with a lone continuation byte.
  const many = Array.from({ length: 6000 }, (_, i) => p(`m${i}`, "short")).join("\n") + "\n";
  assert.ok(many.length > 512 * 1024);
  const far = await failure(write("far.jsonl", cat(many, p("x", "short").slice(0, 20), new Uint8Array([0x80]), "\n")));
  assert.match(far.line, /^ik: far\.jsonl:6001: not UTF-8 text/);
  assert.match((await failure(write("far.jsonl.gz", gzipSync(cat(many, new Uint8Array([0xc0, 0xaf]), "\n"))))).line, /^ik: far\.jsonl\.gz:6001: not UTF-8 text/);
});
