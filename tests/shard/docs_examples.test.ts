/**
 * The sharded-load examples in docs/ stay runnable: docs/k8s-indexed-job.yaml (an Indexed Job that
 * cannot retry a shard past its timetable, an RWX store, the key Secret, a merge Job) and
 * docs/slurm.sbatch (one srun step, one output file per task, the merge last). Bun only (Bun.YAML);
 * skipped under Deno. < 1 s.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { test } from "node:test";

const isBun = typeof (globalThis as any).Bun !== "undefined";
const K8S = fileURLToPath(new URL("../../docs/k8s-indexed-job.yaml", import.meta.url));
const SLURM = fileURLToPath(new URL("../../docs/slurm.sbatch", import.meta.url));

type Obj = Record<string, any>;

/** The manifest's documents (Bun.YAML.parse gives an array for a multi-document file). */
function manifest(): { text: string; docs: Obj[] } {
  const text = readFileSync(K8S, "utf8");
  const parsed = (globalThis as any).Bun.YAML.parse(text);
  assert.ok(Array.isArray(parsed), "docs/k8s-indexed-job.yaml holds several documents");
  return { text, docs: (parsed as unknown[]).filter((d): d is Obj => d !== null && typeof d === "object") };
}

const argvOf = (c: Obj): string[] => [...(c.command ?? []), ...(c.args ?? [])].map(String);

/** Every value of `--name V` (or `--name=V`) in argv. */
function values(argv: string[], name: string): string[] {
  const out: string[] = [];
  argv.forEach((a, i) => {
    if (a === name && i + 1 < argv.length) out.push(argv[i + 1]);
    else if (a.startsWith(name + "=")) out.push(a.slice(name.length + 1));
  });
  return out;
}
function one(argv: string[], name: string): string {
  const v = values(argv, name);
  assert.equal(v.length, 1, `${name} given once in ${argv.join(" ")}`);
  return v[0];
}

/** The Indexed shard Job, its pod spec, its ik container and that container's argv. */
function shardJob(docs: Obj[]) {
  const jobs = docs.filter((d) => d.kind === "Job" && d.spec?.completionMode === "Indexed");
  assert.equal(jobs.length, 1, "exactly one Indexed Job");
  const job = jobs[0];
  const pod = job.spec.template.spec;
  const c = (pod.containers as Obj[]).find((x) => argvOf(x).includes("serve"));
  assert.ok(c, "a container runs ik bench serve");
  return { job, pod, c, argv: argvOf(c) };
}

/** The env var's entry in container `c`. */
const envOf = (c: Obj, name: string): Obj | undefined => (c.env as Obj[] | undefined)?.find((e) => e.name === name);

/** The RWX PVC's name, and the mount path of the volume backed by it in `pod`'s container `c`. */
function rwxMount(docs: Obj[], pod: Obj, c: Obj): string {
  const rwx = docs.filter((d) => d.kind === "PersistentVolumeClaim" && (d.spec?.accessModes ?? []).includes("ReadWriteMany"));
  assert.ok(rwx.length >= 1, "a ReadWriteMany PersistentVolumeClaim");
  const names = new Set(rwx.map((d) => d.metadata.name));
  const vol = (pod.volumes as Obj[] | undefined)?.find((v) => names.has(v.persistentVolumeClaim?.claimName));
  assert.ok(vol, "the pod has a volume from the RWX claim");
  const m = (c.volumeMounts as Obj[] | undefined)?.find((x) => x.name === vol.name);
  assert.ok(m, "the container mounts the RWX volume");
  return m.mountPath as string;
}

const under = (path: string, dir: string) => path === dir || path.startsWith(dir.replace(/\/$/, "") + "/");

test("k8s: an Indexed Job that never retries a shard, stops on exit 64, and runs its pods together", { skip: !isBun }, () => {
  const { docs } = manifest();
  const { job, pod, c } = shardJob(docs);
  const s = job.spec;
  assert.equal(s.completionMode, "Indexed");
  assert.equal(typeof s.completions, "number");
  assert.ok(s.completions >= 2, "at least two shards");
  assert.equal(s.parallelism, s.completions, "parallelism = completions: every shard at once");
  assert.equal(s.backoffLimitPerIndex, 0, "backoffLimitPerIndex 0: a retried shard would miss --start-at");
  assert.equal(s.podReplacementPolicy, "Failed");
  assert.equal(pod.restartPolicy, "Never");
  const rules = (s.podFailurePolicy?.rules ?? []) as Obj[];
  const rule = rules.find((r) => r.action === "FailJob" && r.onExitCodes?.operator === "In" && (r.onExitCodes?.values ?? []).includes(64));
  assert.ok(rule, "a podFailurePolicy rule FailJob on exit code 64");
  assert.equal(rule.onExitCodes.containerName, c.name, "the rule names the ik container");
});

test("k8s: activeDeadlineSeconds covers the lead, every level, the gaps and the last requests", { skip: !isBun }, () => {
  const { text, docs } = manifest();
  const { job, argv } = shardJob(docs);
  const rates = values(argv, "--rates").flatMap((r) => r.split(",")).filter((r) => r.trim() !== "");
  assert.ok(rates.length >= 2, "a grid of --rates levels");
  const duration = Number(one(argv, "--duration-s"));
  const gap = Number(one(argv, "--level-gap-s"));
  const timeouts = values(argv, "--timeout-s");
  const timeout = timeouts.length ? Number(timeouts[0]) : 600; // ik's default per-request limit
  assert.ok(duration > 0 && gap >= 0 && timeout > 0);
  // The lead is the one in the submit command's comment (START_AT = now + N ms), at least 60 s.
  const lead = /__START_AT__\/\$\(\( *\$\(date \+%s%3N\) *\+ *(\d+) *\)\)/.exec(text) ?? /\$\(\( *\$\(date \+%s%3N\) *\+ *(\d+) *\)\)/.exec(text);
  assert.ok(lead, "the comment shows how START_AT is computed: $(( $(date +%s%3N) + N ))");
  const leadS = Math.max(60, Number(lead[1]) / 1000);
  const timetable = leadS + rates.length * duration + (rates.length - 1) * gap + timeout;
  const deadline = job.spec.activeDeadlineSeconds;
  assert.equal(typeof deadline, "number");
  assert.ok(deadline >= timetable, `activeDeadlineSeconds ${deadline} >= ${timetable} (lead ${leadS} + ${rates.length} x ${duration} + ${rates.length - 1} x ${gap} + timeout ${timeout})`);
});

test("k8s: the shard command, its environment, the RWX store and the key Secret", { skip: !isBun }, () => {
  const { text, docs } = manifest();
  const { job, pod, c, argv } = shardJob(docs);
  const at = (w: string[]) => argv.findIndex((_, i) => w.every((x, j) => argv[i + j] === x));
  assert.ok(at(["bench", "serve"]) >= 0 && at(["--mode", "load"]) >= 0, argv.join(" "));
  assert.equal(one(argv, "--shard"), "auto");
  assert.equal(Number(one(argv, "--shards")), job.spec.completions, "--shards = completions");
  assert.equal(one(argv, "--start-at"), "__START_AT__");
  assert.match(text, /sed "s\/__START_AT__\/.*" docs\/k8s-indexed-job\.yaml \| kubectl apply/, "the submit command fills it in");
  assert.ok(one(argv, "--gpu-name").trim() !== "");
  assert.ok(Number(one(argv, "--gpu-count")) >= 1);
  assert.ok(one(argv, "--base-url").startsWith("http"));
  assert.ok(one(argv, "--model") !== "");
  assert.ok(argv.includes("--json"));
  assert.ok(!argv.includes("--fail-on-slo"), "--fail-on-slo is refused with --shard");

  const store = rwxMount(docs, pod, c);
  const runs = envOf(c, "IK_RUNS_DIR")?.value;
  assert.ok(typeof runs === "string" && under(runs, store), `IK_RUNS_DIR ${runs} is on the RWX volume at ${store}`);

  const keyFile = envOf(c, "IK_KEY_FILE")?.value;
  assert.ok(typeof keyFile === "string", "IK_KEY_FILE is set");
  const secretVols = new Set(((pod.volumes ?? []) as Obj[]).filter((v) => v.secret?.secretName).map((v) => v.name));
  const keyMount = ((c.volumeMounts ?? []) as Obj[]).find((m) => secretVols.has(m.name) && under(keyFile, m.mountPath));
  assert.ok(keyMount, `IK_KEY_FILE ${keyFile} lies in a mounted Secret`);
  assert.equal(keyMount.readOnly, true);

  assert.equal(envOf(c, "IK_JOB_UID")?.valueFrom?.fieldRef?.fieldPath, "metadata.labels['batch.kubernetes.io/controller-uid']");
});

test("k8s: a second Job merges the slices from the same store", { skip: !isBun }, () => {
  const { text, docs } = manifest();
  const shard = shardJob(docs);
  const merges = docs.filter((d) => d.kind === "Job" && d !== shard.job && (d.spec?.template?.spec?.containers ?? []).some((x: Obj) => argvOf(x).includes("merge")));
  assert.equal(merges.length, 1, "one merge Job");
  const pod = merges[0].spec.template.spec;
  const c = (pod.containers as Obj[]).find((x) => argvOf(x).includes("merge"))!;
  const argv = argvOf(c);
  assert.equal(pod.restartPolicy, "Never");
  const store = rwxMount(docs, pod, c);
  assert.ok(argv.some((a) => under(a, store)), `merge reads the store at ${store}: ${argv.join(" ")}`);
  const group = values(shard.argv, "--group");
  if (group.length) assert.deepEqual(values(argv, "--group"), group, "the merge names the shards' group");
  assert.ok(argv.includes("--json"));
  assert.match(text, /kubectl wait --for=condition=complete[^\n]*job\/ik-shards/, "the merge is applied after the shard Job completes");
});

test("slurm: bash -n passes", { skip: !isBun }, () => {
  const r = spawnSync("bash", ["-n", SLURM], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
});

/** The script's lines without comments and blanks, continuation lines joined. */
function commandLines(text: string): string[] {
  const joined = text.replace(/\\\n/g, " ");
  return joined.split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
}

test("slurm: one srun step of --shard auto tasks, one output file per task, the merge last", { skip: !isBun }, () => {
  const text = readFileSync(SLURM, "utf8");
  const sbatch = (name: string) => new RegExp(`^#SBATCH --${name}=(\\S+)`, "m").exec(text)?.[1];
  assert.equal(sbatch("ntasks"), "4");
  assert.ok(sbatch("nodes"), "#SBATCH --nodes");
  const lines = commandLines(text);
  // The srun step with its per-task wrapper: from `srun` to the next blank line.
  const srun = /^srun\s[\s\S]*?(?=\n[ \t]*\n|(?![\s\S]))/m.exec(text)?.[0];
  assert.ok(srun, "an srun step");
  assert.match(srun, /--kill-on-bad-exit=0(\s|$)/);
  assert.match(srun, /--output=\S*%t/, "--output with %t: one file per task");
  assert.match(srun, /--error=\S*%t/, "stderr apart from the slice JSON");
  assert.match(srun, /--cpu-bind=\S+/);
  assert.match(srun, /--shard auto/);
  assert.match(srun, /--start-at "?\$\{?START_AT\}?"?/);
  assert.match(srun, /--gpu-name \S/);
  assert.match(srun, /--gpu-count \d/);
  assert.match(srun, /SLURM_LOCALID/);
  assert.doesNotMatch(srun, /--fail-on-slo/);
  // sbcast to node-local /tmp (directly, or to a variable set to a /tmp path), and srun runs that copy.
  const sb = lines.find((l) => /^sbcast\s/.test(l));
  assert.ok(sb, "an sbcast of the binary");
  let dest = sb.split(/\s+/).pop()!.replace(/"/g, "");
  const v = /^\$\{?([A-Za-z_][A-Za-z_0-9]*)\}?$/.exec(dest);
  if (v) {
    const def = lines.map((l) => new RegExp(`^(?:export\\s+)?${v[1]}=(\\S+)$`).exec(l)).find((m) => m);
    assert.ok(def, `${dest} is set in the script`);
    assert.match(srun, new RegExp(`"?\\$\\{?${v[1]}\\}?"? bench serve`), "the tasks run the sbcast copy");
    dest = def[1].replace(/"/g, "");
  }
  assert.ok(dest.startsWith("/tmp/"), `sbcast to node-local /tmp, not ${dest}`);
  // START_AT computed once in the batch script (before srun), in ms, in the future.
  const startAt = lines.findIndex((l) => /^(export\s+)?START_AT=\$\(\( *\$\(date \+%s%3N\) *\+ *\d+ *\)\)$/.test(l));
  assert.ok(startAt >= 0 && startAt < lines.findIndex((l) => /^srun\s/.test(l)), "START_AT=$(( $(date +%s%3N) + N )) before srun");
  assert.ok(lines.some((l) => /^export\s+IK_KEY_FILE=/.test(l)), "IK_KEY_FILE exported for the tasks");
  assert.ok(lines.some((l) => /^export\s+IK_RUNS_DIR=/.test(l)), "IK_RUNS_DIR exported for the tasks");
  const last = lines[lines.length - 1];
  assert.match(last, /^("?\$\{?[A-Za-z_][A-Za-z_0-9]*\}?"?|\S*\bik)\s+merge\s/, `the last command is ik merge: ${last}`);
});
