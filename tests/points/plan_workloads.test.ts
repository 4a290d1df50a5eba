/** A points plan's workload files, checked before the preflight (both runtimes, < 1 s). */
import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { IkError } from "../../lib/cli/errors.ts";
import { workloadFromPrompts } from "../../lib/load_trial/workload.ts";
import { parsePlan } from "../../lib/points/plan.ts";
import { checkPlanWorkloads } from "../../lib/points/plan_workloads.ts";

const lt = (file: string) => ["{ik}", "load-trial", "run", "--base", "{base}", "--expected-model", "{model}", "--workload", file, "--rate", "1", "--requests", "3", "--ttft", "2", "--tpot", "0.03", "--attainment", "0.95", "--out", "{point_dir}/client"];
const point = (id: string, file: string, argv = lt(file)) => ({ id, workload: { file, rate_rps: 1, requests: 3 }, client_argv: argv, client_timeout_s: 60, drain_timeout_s: 30 });
const planOf = (...points: unknown[]) => parsePlan(JSON.stringify({ schema: 1, points }), "plan.json");
const V = { base: "http://127.0.0.1:9", model: "m" };

describe("checkPlanWorkloads", () => {
  let dir: string;
  const reads: string[] = [];
  const read = (p: string) => {
    reads.push(p);
    return readFile(p, "utf8");
  };
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "ik-plan-wl-"));
    const w = workloadFromPrompts([{ id: "a", bucket: "all", messages: [{ role: "user", content: "hi" }], maxTokens: 8, kind: "chat", extra: {} }], { n: 3, seed: 0, source: {}, defaultMaxTokens: 8 });
    await writeFile(join(dir, "good.json"), JSON.stringify(w));
    await writeFile(join(dir, "edited.json"), JSON.stringify({ ...w, requests: w.requests.map((r) => ({ ...r, max_tokens: 9 })) }));
    await writeFile(join(dir, "plan.json"), "{}");
    await mkdir(join(dir, "folder"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  test("good workloads pass, each file read once, relative to the clients' folder", async () => {
    reads.length = 0;
    await checkPlanWorkloads(planOf(point("p1", "good.json"), point("p2", "./good.json"), point("p3", join(dir, "good.json"))), "plan.json", dir, read, V);
    assert.deepEqual(reads, [join(dir, "good.json")]);
  });

  test("missing, a folder, edited or not a workload: every point named, exit 65, one line", async () => {
    const plan = planOf(point("p1", "good.json"), point("p2", "nope.json"), point("p3", "folder"), point("p4", "edited.json"), point("p5", "plan.json"));
    await assert.rejects(checkPlanWorkloads(plan, "my-plan.json", dir, read, V), (e: unknown) => {
      assert.ok(e instanceof IkError);
      assert.equal(e.code, 65);
      const line = e.oneLine();
      assert.equal(line.split("\n").length, 1);
      assert.match(line, /^ik: my-plan\.json: 4 plan problems: /);
      assert.match(line, new RegExp(`point 'p2': workload\\.file nope\\.json not found \\(${join(dir, "nope.json").replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}\\)`));
      assert.match(line, /point 'p3': workload\.file folder is a folder/);
      assert.match(line, /point 'p4': workload\.file edited\.json is not a usable workload: .*does not match the requests/);
      assert.match(line, /point 'p5': workload\.file plan\.json is not a usable workload: .*requests must be a non-empty list/);
      assert.doesNotMatch(line, /'p1'/);
      return true;
    });
  });

  test("the runner's placeholders are filled in as the client will get them; {point_dir} cannot hold a workload yet", async () => {
    await mkdir(join(dir, "wl", "p1"), { recursive: true });
    await writeFile(join(dir, "wl", "p1", "w.json"), await readFile(join(dir, "good.json")));
    reads.length = 0;
    await checkPlanWorkloads(planOf(point("p1", "wl/{point_id}/w.json")), "plan.json", dir, read, V);
    assert.deepEqual(reads, [join(dir, "wl", "p1", "w.json")]);
    await assert.rejects(checkPlanWorkloads(planOf(point("p2", "wl/{point_id}/w.json")), "plan.json", dir, read, V), /point 'p2': workload\.file wl\/p2\/w\.json not found/);
    await assert.rejects(checkPlanWorkloads(planOf(point("p1", "{point_dir}/w.json")), "plan.json", dir, read, V), /point 'p1': workload\.file \{point_dir\}\/w\.json is in \{point_dir\}, which the run creates empty/);
  });

  test("a client that is not ik load-trial run is not held to a local file", async () => {
    await checkPlanWorkloads(planOf(point("p1", "remote/w.json", ["ssh", "host", "run-trial", "remote/w.json"])), "plan.json", dir, read, V);
  });
});
