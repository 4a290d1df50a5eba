/**
 * Errors echo file content bounded: a file that is not a table (a one-line --save-detailed JSON
 * given as --runs), a row of huge fields, a long value, give one short line naming the file, never
 * the file's text. Pure, < 1 s.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { clipList, clipText } from "../../lib/summarize/clip_text.ts";
import { parseJsonValues, parseRuns } from "../../lib/summarize/mod.ts";
import { parseSamples } from "../../lib/summarize/sample_manifest.ts";
import { parseTsv } from "../../lib/summarize/tsv.ts";

const HEAD = "tag\tdataset\tconc\tserial_lo\tserial_hi";
const BIG = "x".repeat(200_000);

function errorLine(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof IkError, String(e));
    return e.oneLine();
  }
  throw new Error("no error");
}

describe("clipping", () => {
  test("a short value stays whole, a long one is cut and says its length", () => {
    assert.equal(clipText("abc"), "abc");
    assert.equal(clipText("a".repeat(40)), "a".repeat(40));
    assert.equal(clipText("a".repeat(41)), `${"a".repeat(40)}…(41 chars)`);
    assert.equal(clipText("abcdef", 3), "abc…(6 chars)");
  });
  test("a cut never splits a surrogate pair", () => {
    const s = "ab\u{1F600}cd";
    assert.equal(clipText(s, 3), "ab…(6 chars)");
  });
  test("a list shows its first items and counts the rest", () => {
    assert.equal(clipList(["a", "b"]), "a, b");
    assert.equal(clipList(["a", "b", "c", "d"], 2), "a, b, … 2 more");
    assert.equal(clipList([BIG], 2, 5), "xxxxx…(200000 chars)");
  });
});

describe("errors echo file content bounded", () => {
  test("a one-line JSON given as runs.tsv: its header is shown cut", () => {
    const json = JSON.stringify({ date: "20250101-120000", endpoint_type: "openai-chat", itls: Array.from({ length: 50_000 }, () => [0.01, 0.02]) });
    const line = errorLine(() => parseRuns(json, "results/big.json"));
    assert.ok(line.length < 400, `${line.length} chars: ${line.slice(0, 500)}`);
    assert.match(line, /^ik: results\/big\.json:1: runs\.tsv lacks column\(s\) tag, dataset, conc, serial_lo, serial_hi \(has \{"date": ?"2025.*…\(\d+ chars\)\)/);
  });
  test("a header of many long columns: the first few, each cut, and how many more", () => {
    const cols = Array.from({ length: 500 }, (_, i) => `c${i}${BIG.slice(0, 1000)}`);
    const line = errorLine(() => parseRuns(cols.join("\t") + "\n", "runs.tsv"));
    assert.ok(line.length < 600, `${line.length} chars`);
    assert.match(line, /… 494 more\)/);
  });
  test("a row whose field count differs: the header's columns are listed bounded", () => {
    const cols = Array.from({ length: 300 }, (_, i) => `col${i}_${BIG.slice(0, 500)}`);
    const line = errorLine(() => parseTsv(`${cols.join("\t")}\na\tb\n`, "t.tsv"));
    assert.ok(line.length < 600, `${line.length} chars`);
    assert.match(line, /^ik: t\.tsv:2: 2 tab-separated field\(s\), the header has 300 \(col0_x+…\(\d+ chars\), .*… 294 more\)/);
  });
  test("a repeated long column name is cut", () => {
    const line = errorLine(() => parseTsv(`${BIG}\t${BIG}\n`, "t.tsv"));
    assert.ok(line.length < 300, `${line.length} chars`);
    assert.match(line, /the header repeats column 'x{40}…\(200000 chars\)'/);
  });
  for (const [name, row] of [
    ["tag", `${BIG} y\tds\t1\t0\t0`],
    ["conc", `a\tds\t${BIG}\t0\t0`],
    ["serial_lo", `a\tds\t1\t${BIG}\t0`],
  ] as const) {
    test(`a long bad ${name} is cut`, () => {
      const line = errorLine(() => parseRuns(`${HEAD}\n${row}\n`, "runs.tsv"));
      assert.ok(line.length < 300, `${line.length} chars: ${line.slice(0, 400)}`);
      assert.match(line, new RegExp(`^ik: runs\\.tsv:2: ${name} 'x{40}…`));
    });
  }
  test("a repeated long tag is cut", () => {
    const tag = "t".repeat(100_000);
    const line = errorLine(() => parseRuns(`${HEAD}\n${tag}\tds\t1\t0\t0\n${tag}\tds\t1\t0\t0\n`, "runs.tsv"));
    assert.ok(line.length < 300, `${line.length} chars`);
    assert.match(line, /tag 't{40}…\(100000 chars\)' repeats line 2/);
  });
  test("a sample manifest's long bad length is cut", () => {
    const line = errorLine(() => parseSamples(`i\tsha\tprompt_len\toutput_len\n0\tab\t${BIG}\t${BIG}\n`, "a.samples.tsv"));
    assert.ok(line.length < 300, `${line.length} chars`);
  });
  test("a JSON parser's message is cut", () => {
    // two values, the second bad: the scanner path, whose message quotes the parser's
    try {
      parseJsonValues(`{"a": 1}\n{"b": ${BIG}}`);
      assert.fail("parsed");
    } catch (e) {
      assert.ok((e as Error).message.length < 200, (e as Error).message.slice(0, 300));
    }
  });
});
