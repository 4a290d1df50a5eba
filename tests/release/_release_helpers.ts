/** Helpers shared by the release tests: where the tools are, and a line-watching child process. */
import { spawn } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { arch } from "node:os";
import { delimiter, join } from "node:path";
import { ROOT } from "../_helpers/ik.ts";
import { runtime } from "../../lib/runtime/mod.ts";

export { ROOT };

/** The CPU of this host in release-file terms. */
export const HOST_CPU: string = arch() === "arm64" ? "arm64" : "x64";

/** The Bun that npm ci installed (it builds the bundles), or null. */
export function bunBin(): string | null {
  const p = join(ROOT, "node_modules", ".bin", "bun");
  return existsSync(p) ? p : null;
}

/** An executable named `name` on PATH, or null. */
export function onPath(name: string): string | null {
  for (const dir of (runtime.env("PATH") ?? "").split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch { /* not here */ }
  }
  return null;
}

/** The Node release builds embed (cached by scripts/release.ts) for `cpu`, or null when not fetched yet. */
export function cachedNode(cpu: string = HOST_CPU): string | null {
  const rel = join(ROOT, ".bun-cache", "ik-release");
  if (!existsSync(rel)) return null;
  const dir = readdirSync(rel).find((d) => d.startsWith(`node-linux-${cpu}@`));
  const p = dir ? join(rel, dir, "bin", "node") : null;
  return p && existsSync(p) ? p : null;
}

/** postject's API file cached by scripts/release.ts, or null. */
export function cachedPostject(): string | null {
  const rel = join(ROOT, ".bun-cache", "ik-release");
  if (!existsSync(rel)) return null;
  const dir = readdirSync(rel).find((d) => d.startsWith("postject@"));
  const p = dir ? join(rel, dir, "dist", "api.js") : null;
  return p && existsSync(p) ? p : null;
}

/** qemu-aarch64-static and the arm64 libraries it needs, or null when not installed. */
export function qemuArm64(): string[] | null {
  const q = onPath("qemu-aarch64-static");
  if (!q || !existsSync("/usr/aarch64-linux-gnu/lib/ld-linux-aarch64.so.1")) return null;
  return [q, "-L", "/usr/aarch64-linux-gnu"];
}

/** A child process whose stdout is read line by line. */
export interface LineProcess {
  /** Resolves with the first stdout line matching `re`; rejects on exit or after timeoutMs. */
  line(re: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  write(text: string): void;
  stderr(): string;
  /** Resolves when the process ends, or with null after timeoutMs (the process is then killed). */
  ended(timeoutMs: number): Promise<{ code: number | null; signal: string | null } | null>;
  kill(): void;
}

/** Starts argv with stdin piped, for a fixture driven by lines. */
export function startLines(argv: string[], env: Record<string, string> = {}): LineProcess {
  const child = spawn(argv[0], argv.slice(1), {
    cwd: ROOT,
    env: { ...runtime.envAll(), NO_COLOR: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let out = "", err = "";
  let exit: { code: number | null; signal: string | null } | null = null;
  const waiters = new Set<() => void>();
  const poke = () => waiters.forEach((w) => w());
  child.stdout!.on("data", (d) => {
    out += d;
    poke();
  });
  child.stderr!.on("data", (d) => {
    err += d;
  });
  const exited = new Promise<{ code: number | null; signal: string | null }>((ok) =>
    child.on("close", (code, signal) => {
      exit = { code, signal };
      ok(exit);
      poke();
    })
  );
  child.stdin!.on("error", () => {});
  return {
    line(re, timeoutMs = 20_000) {
      return new Promise((ok, fail) => {
        const t = setTimeout(() => {
          waiters.delete(check);
          fail(new Error(`no stdout line ${re} in ${timeoutMs} ms; stdout: ${out.slice(-400)}; stderr: ${err.slice(-800)}`));
        }, timeoutMs);
        function check() {
          for (const l of out.split("\n")) {
            const m = l.match(re);
            if (m) {
              clearTimeout(t);
              waiters.delete(check);
              return ok(m);
            }
          }
          if (exit) {
            clearTimeout(t);
            waiters.delete(check);
            fail(new Error(`exited ${JSON.stringify(exit)} before ${re}; stdout: ${out.slice(-400)}; stderr: ${err.slice(-800)}`));
          }
        }
        waiters.add(check);
        check();
      });
    },
    write(text) {
      child.stdin!.write(text);
    },
    stderr: () => err,
    async ended(timeoutMs) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const r = await Promise.race([exited, new Promise<null>((ok) => (timer = setTimeout(() => ok(null), timeoutMs)))]);
      clearTimeout(timer);
      if (r === null) {
        child.kill("SIGKILL");
        await exited;
      }
      return r;
    },
    kill() {
      if (!exit) child.kill("SIGKILL");
    },
  };
}
