/**
 * Size table of the release binaries: size, gzip -6 size, the runtime inside and what ik adds to it.
 * Goal: each binary is at most its runtime (Bun or Node) + 8 MB of ik.
 *
 *   bun scripts/sizes.ts [dist/ik-linux-x64 ...]     (default: dist/ik-linux-*; scripts/release.ts runs it)
 *
 * The runtime a binary embeds is found from its name: the Bun runtimes Bun cached in .bun-cache
 * (or npm's own bun for the host CPU), the Node ones scripts/release.ts cached in .bun-cache/ik-release.
 * @module
 */
import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, realpathSync, statSync } from "node:fs";
import { arch } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
/** What ik may add to its runtime. */
export const BUDGET_BYTES = 8 * 2 ** 20;

/** One binary to measure. */
export interface SizeInput {
  file: string;
  runtimeName: string;
  /** The runtime executable embedded in the file ("" when unknown). */
  runtimePath: string;
}

/** One measured row. */
export interface SizeRow extends SizeInput {
  bytes: number;
  gzipBytes: number;
  runtimeBytes: number | null;
}

/** The CPU an ELF file is for ("x86-64", "aarch64", or "machine N"); null when it is not ELF. */
export function elfMachine(path: string): string | null {
  const fd = openSync(path, "r");
  try {
    const h = Buffer.alloc(20);
    if (readSync(fd, h, 0, 20, 0) < 20 || h.readUInt32BE(0) !== 0x7f454c46) return null;
    const m = h[5] === 2 ? h.readUInt16BE(18) : h.readUInt16LE(18);
    return m === 62 ? "x86-64" : m === 183 ? "aarch64" : `machine ${m}`;
  } finally {
    closeSync(fd);
  }
}

/** Bytes of `gzip -6 -c file` (the system gzip: the number a person reproduces by hand). */
export function gzipSize(path: string): Promise<number> {
  return new Promise((ok, fail) => {
    const child = spawn("gzip", ["-6", "-c", path], { stdio: ["ignore", "pipe", "inherit"] });
    let n = 0;
    child.stdout.on("data", (c: Buffer) => (n += c.length));
    child.on("error", fail);
    child.on("close", (code) => (code === 0 ? ok(n) : fail(new Error(`gzip ${path} exited ${code}`))));
  });
}

/** Measures every row (gzip runs one at a time: the build machine has 2 cores and others use them). */
export async function measureSizes(inputs: SizeInput[]): Promise<SizeRow[]> {
  const rows: SizeRow[] = [];
  for (const i of inputs) {
    rows.push({
      ...i,
      bytes: statSync(i.file).size,
      gzipBytes: await gzipSize(i.file),
      runtimeBytes: i.runtimePath && existsSync(i.runtimePath) ? statSync(i.runtimePath).size : null,
    });
  }
  return rows;
}

const mb = (n: number) => (n / 1e6).toFixed(1);

/** A markdown table, sizes in MB (10^6 bytes), with a verdict against the 8 MB budget per row. */
export function formatSizeTable(rows: SizeRow[]): string {
  const out = [
    "| file | size MB | gzip -6 MB | runtime inside | runtime MB | ik adds MB | within runtime + 8 MB |",
    "|---|---:|---:|---|---:|---:|---|",
  ];
  for (const r of rows) {
    const add = r.runtimeBytes === null ? null : r.bytes - r.runtimeBytes;
    out.push(
      `| ${basename(r.file)} | ${mb(r.bytes)} | ${mb(r.gzipBytes)} | ${r.runtimeName} | ` +
        `${r.runtimeBytes === null ? "?" : mb(r.runtimeBytes)} | ${add === null ? "?" : mb(add)} | ` +
        `${add === null ? "unknown" : add <= BUDGET_BYTES ? "yes" : "NO"} |`,
    );
  }
  return out.join("\n");
}

/** The runtime a release binary embeds, found from its file name. */
export function runtimeFor(file: string): Pick<SizeInput, "runtimeName" | "runtimePath"> {
  const name = basename(file);
  const cache = join(ROOT, ".bun-cache");
  if (name.endsWith("-node")) {
    const cpu = name.includes("arm64") ? "arm64" : name.includes("x64") ? "x64" : arch();
    const rel = join(cache, "ik-release");
    const dir = existsSync(rel) ? readdirSync(rel).find((d) => d.startsWith(`node-linux-${cpu}@`)) : undefined;
    return { runtimeName: dir ? `node ${dir.split("@")[1]}` : "node", runtimePath: dir ? join(rel, dir, "bin", "node") : "" };
  }
  const bunVersion = JSON.parse(readFileSync(join(ROOT, "node_modules", "bun", "package.json"), "utf8")).version;
  const cpu = name.includes("arm64") ? "aarch64" : name.includes("baseline") ? "x64-baseline" : "x64";
  const hostCpu = arch() === "arm64" ? "aarch64" : "x64";
  const cached = join(cache, `bun-linux-${cpu}-v${bunVersion}`);
  const own = join(ROOT, "node_modules", ".bin", "bun");
  const path = cpu === hostCpu && existsSync(own) ? realpathSync(own) : existsSync(cached) ? cached : "";
  return { runtimeName: `bun ${bunVersion}`, runtimePath: path };
}

if (import.meta.main) {
  let files = process.argv.slice(2);
  if (files.length === 0) {
    const dist = join(ROOT, "dist");
    files = existsSync(dist) ? readdirSync(dist).filter((f) => /^ik-linux-/.test(f)).sort().map((f) => join(dist, f)) : [];
  }
  if (files.length === 0) {
    process.stderr.write("sizes: no dist/ik-linux-* files; run npm run release first\n");
    process.exit(1);
  }
  const rows = await measureSizes(files.map((f) => ({ file: resolve(f), ...runtimeFor(f) })));
  process.stdout.write(formatSizeTable(rows) + "\n");
}
