/**
 * Conversation files for `bench serve --mode conversations` (lib/prompts/conversations.ts, the
 * ShareGPT loader): every user turn is read (text parts joined; `from` human/user in any case) or
 * the file is refused naming file:line (65); a system (or developer) message only at the start;
 * `turns` holds only user turns; numeric ids kept; a BOM dropped; .jsonl.gz read; a cut set
 * (--max-conversations) is its own workload; ShareGPT keeps a leading system turn. In process, < 1 s.
 */
import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { firstConversations, parseConversationsBytes, parseConversationsText } from "../../lib/prompts/conversations.ts";
import { readShareGptConversations } from "../../lib/datasets/sharegpt_conversations.ts";

const line = (o: unknown) => JSON.stringify(o) + "\n";
const refused = (text: string, re: RegExp) => {
  assert.throws(() => parseConversationsText(text, "c.jsonl"), (e: unknown) => {
    assert.ok(e instanceof IkError, String(e));
    assert.equal(e.code, 65);
    assert.match(e.oneLine(), re);
    return true;
  });
};

test("messages: text parts joined, from human/user in any case, a leading system or developer message opens every turn", () => {
  const set = parseConversationsText(
    line({ id: "p", messages: [{ role: "user", content: [{ type: "text", text: "part one" }, { type: "text", text: "part two" }] }, { role: "assistant", content: "x" }, { role: "user", content: "next" }] }) +
      line({ id: "h", messages: [{ from: "Human", value: "hi" }, { from: "gpt", value: "a" }, { from: "user", value: "again" }, { from: "HUMAN", value: "third" }] }) +
      line({ id: "d", messages: [{ role: "developer", content: "be terse" }, { role: "User", content: "q" }] }),
    "c.jsonl",
  );
  assert.deepEqual(set.conversations.map((c) => [c.id, c.turns, c.system ?? null]), [
    ["p", ["part one\npart two", "next"], null],
    ["h", ["hi", "again", "third"], null],
    ["d", ["q"], "be terse"],
  ]);
});

test("messages: what cannot be sent as written is refused naming file:line and the message", () => {
  refused(line({ turns: ["ok"] }) + line({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }), /^ik: c\.jsonl:2: message 1: the user message's content cannot be read/);
  refused(line({ messages: [{ role: "user", content: "a" }, { role: "system", content: "late" }, { role: "user", content: "b" }] }), /c\.jsonl:1: message 2: a system message after the first user turn/);
  refused(line({ messages: [{ role: "user", content: "a" }, { role: "developer", content: "late" }] }), /message 2: a developer message after the first user turn/);
  refused(line({ messages: [{ role: "tool", content: "r" }, { role: "user", content: "a" }] }), /message 1: role 'tool' is not one ik sends/);
  refused(line({ messages: [{ role: "user", content: 5 }] }), /message 1: the user message's content cannot be read/);
  refused(line({ system: "s", messages: [{ role: "system", content: "t" }, { role: "user", content: "a" }] }), /both 'system' and a system message/);
  refused(line({ messages: [{ role: "assistant", content: "only an answer" }] }), /needs at least one user turn/);
});

test("turns: only user turns; an empty one is named", () => {
  refused(line({ turns: [{ role: "assistant", content: "hello" }, "q"] }), /c\.jsonl:1: turn 1 has role 'assistant': 'turns' holds only the user's turns/);
  refused(line({ turns: ["a", "", "c"] }), /c\.jsonl:1: turn 2 is empty/);
  refused(line({ turns: ["a", 7] }), /turn 2 cannot be read/);
  const set = parseConversationsText(line({ turns: [{ role: "user", content: "a" }, { content: [{ type: "text", text: "b" }] }, { from: "human", value: "c" }] }), "c.jsonl");
  assert.deepEqual(set.conversations[0].turns, ["a", "b", "c"]);
});

test("ids: a number is kept as a string, other types refused; a BOM is dropped", () => {
  const set = parseConversationsText("\uFEFF" + line({ id: 17, turns: ["a"] }) + line({ turns: ["b"] }), "c.jsonl");
  assert.deepEqual(set.conversations.map((c) => c.id), ["17", "conv-1"]);
  assert.equal(set.sha256, parseConversationsText(line({ id: 17, turns: ["a"] }) + line({ turns: ["b"] }), "c.jsonl").sha256, "the BOM is not part of the workload");
  refused(line({ id: true, turns: ["a"] }), /'id' must be a non-empty string or a number/);
  refused(line({ id: 1, turns: ["a"] }) + line({ id: "1", turns: ["b"] }), /c\.jsonl:2: conversation id '1' repeats/);
});

test(".jsonl.gz is read like the plain file; corrupt gzip is 65", () => {
  const text = line({ id: "a", turns: ["x", "y"] }) + line({ id: "b", turns: ["z"] });
  const plain = parseConversationsBytes(new TextEncoder().encode(text), "c.jsonl");
  const gz = parseConversationsBytes(new Uint8Array(gzipSync(text)), "c.jsonl.gz");
  assert.deepEqual(gz.conversations, plain.conversations);
  assert.equal(gz.sha256, plain.sha256);
  const bad = new Uint8Array(gzipSync(text)).slice(0, 12);
  assert.throws(() => parseConversationsBytes(bad, "c.jsonl.gz"), (e: unknown) => e instanceof IkError && e.code === 65 && /c\.jsonl\.gz: cannot read/.test(e.oneLine()));
});

test("--max-conversations: the first N, another workload identity that records N", () => {
  const set = parseConversationsText([1, 2, 3, 4].map((i) => line({ id: `c${i}`, turns: [`t${i}`] })).join(""), "c.jsonl");
  const two = firstConversations(set, 2), three = firstConversations(set, 3), all = firstConversations(set, 0), more = firstConversations(set, 9);
  assert.deepEqual(two.conversations.map((c) => c.id), ["c1", "c2"]);
  assert.notEqual(two.sha256, set.sha256);
  assert.notEqual(two.sha256, three.sha256);
  assert.equal(all.sha256, set.sha256);
  assert.equal(more.sha256, set.sha256, "nothing cut: the same workload");
  assert.equal(two.source.max_conversations, 2);
  assert.equal(two.source.file_sha256, set.sha256);
  assert.equal(set.conversations.length, 4, "the loaded set is not changed");
});

test("ShareGPT: a leading system turn is kept as the system message (as in a JSONL); a later one drops the entry, counted", async () => {
  const dir = await mkdtemp(join(tmpdir(), "ik-conv-sg-"));
  try {
    const file = join(dir, "sg.json");
    await writeFile(file, JSON.stringify([
      { id: "s", conversations: [{ from: "system", value: "be brief" }, { from: "human", value: "a" }, { from: "gpt", value: "x" }, { from: "Human", value: "b" }] },
      { id: "late", conversations: [{ from: "human", value: "a" }, { from: "system", value: "late" }, { from: "human", value: "b" }] },
      { id: "n", conversations: [{ from: "human", value: "c" }, { from: "gpt", value: "y" }, { from: "user", value: "d" }] },
    ]));
    const set = await readShareGptConversations(file, 0, 0);
    const byId = new Map(set.conversations.map((c) => [c.id, c]));
    assert.deepEqual([...byId.keys()].sort(), ["sharegpt-n", "sharegpt-s"]);
    assert.equal(byId.get("sharegpt-s")!.system, "be brief");
    assert.deepEqual(byId.get("sharegpt-s")!.turns, ["a", "b"]);
    assert.equal(byId.get("sharegpt-n")!.system ?? null, null);
    assert.equal(set.source.dropped_system_after_first_turn, 1);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
