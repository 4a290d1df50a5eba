/**
 * ik's CLI entry: parse argv, build the context, run the command, map errors to exit codes.
 * Errors a person sees are one line on stderr; stack traces only with IK_DEBUG=1.
 * @module
 */
import { tmpdir } from "node:os";
import { join } from "node:path";
import { formatErrorLine, IkError } from "./lib/cli/errors.ts";
import { ExitCode } from "./lib/cli/exit_codes.ts";
import { makeContext } from "./lib/commands/context.ts";
import { closedLoopStreams } from "./lib/commands/bench_serve_modes.ts";
import { commandOptions, optionHint } from "./lib/cli/option_hints.ts";
import { examplesBlock, helpPageOf } from "./lib/cli/help_examples.ts";
import { registerArgvSecrets, scrubArgv, scrubKnown, scrubText } from "./lib/evidence/scrub.ts";
import { isUnhandledWriteFailure, outputError } from "./lib/evidence/output_error.ts";
import { HTTP_CLIENT_ENV, httpClientEnvProblem, measuringStartEnv, runtime } from "./lib/runtime/mod.ts";
import { setDefaultFetch } from "./lib/client/default_fetch.ts";
import { versionInfo, versionLine } from "./lib/cli/version_info.ts";
import { VERSION } from "./lib/version.ts";

const EXIT_SENTINEL = Symbol("exit");
/** Signals closer together than this are one interrupt. */
const DUPLICATE_SIGNAL_MS = 500;

/** The commands that open many streams: on Bun they measure in a process started with {@link measuringStartEnv}. */
const MANY_STREAMS = new Set(["bench", "selftest", "load-trial"]);
const GRACE_MS = 10_000;

/** Runs ik with `argv` (without the program name) and returns the exit code. */
export async function main(argvIn: string[]): Promise<number> {
  // Measured requests go through the runtime's own HTTP client (on Node: node:http, not its fetch).
  setDefaultFetch(runtime.fetch);
  // Bare `ik` shows the help (exit 0), like `ik --help`.
  const argv = argvIn.length === 0 ? ["--help"] : argvIn;
  // The API key (the value `--api-key-env` names) and any secret flag's value are known to the
  // scrubber before anything can print them: usage errors, server echoes, the crash log.
  registerArgvSecrets(argv, (n) => runtime.env(n));
  if (argv[0] === "--version" || argv[0] === "-V") {
    const json = argv.includes("--json") || runtime.env("IK_OUTPUT") === "json";
    runtime.writeStdout(json ? JSON.stringify(versionInfo(runtime)) + "\n" : versionLine(runtime) + "\n");
    return ExitCode.OK;
  }
  // The parsers (optique and every command's flags) are loaded here, after --version: in the
  // binary they are a chunk of their own, which `ik --version` never reads (~15 MB less RSS).
  const { runParser } = await import("@optique/core/facade");
  const { formatMessage, message } = await import("@optique/core/message");
  const { cliParser: buildParser, dispatch } = await import("./lib/commands/mod.ts");
  // Built for this parse and dropped after it (nothing else keeps it): see cliParser.
  let cliParser: ReturnType<typeof buildParser> | null = buildParser();
  let shownCode: number | null = null;
  let parsed: unknown;
  let helpText = "";
  try {
    parsed = runParser(
      cliParser,
      "ik",
      argv,
      {
        brief:
          message`ik: benchmark OpenAI-compatible LLM inference servers (vLLM, SGLang, llama.cpp, TensorRT-LLM).`,
        help: {
          command: true,
          option: { names: ["--help", "-h"] },
          onShow: (code: number) => {
            const page = helpPageOf(argv);
            const more = examplesBlock(page, helpText);
            if (more) runtime.writeStdout(more);
            shownCode = code;
            throw EXIT_SENTINEL;
          },
        },
        version: { value: VERSION, option: true },
        completion: {
          command: true,
          onShow: (code: number) => {
            shownCode = code;
            throw EXIT_SENTINEL;
          },
        },
        showDefault: true,
        showChoices: true,
        aboveError: "none",
        stdout: (t: string) => {
          helpText += t + "\n";
          runtime.writeStdout(scrubKnown(t) + "\n");
        },
        stderr: () => {},
        onError: (_code: number, err: unknown) => {
          const raw = formatMessage(err as Parameters<typeof formatMessage>[0], { colors: false, quotes: true });
          const { text, path } = withOptionHint(cliParser, argv, raw);
          const where = path || "arguments";
          const hint = path ? `see 'ik ${path} --help'` : "see 'ik --help'";
          runtime.writeStderr(scrubText(formatErrorLine(where, text.replace(/\.$/, ""), hint)) + "\n");
          shownCode = ExitCode.USAGE;
          throw EXIT_SENTINEL;
        },
      } as Parameters<typeof runParser>[3],
    );
  } catch (e) {
    if (e === EXIT_SENTINEL) return shownCode ?? ExitCode.OK;
    throw e;
  } finally {
    cliParser = null;
  }
  const clientProblem = httpClientEnvProblem({ [HTTP_CLIENT_ENV]: runtime.env(HTTP_CLIENT_ENV) });
  if (clientProblem !== null) {
    runtime.writeStderr(scrubText(formatErrorLine(`env ${HTTP_CLIENT_ENV}`, clientProblem, "set it to h1 (ik's HTTP/1.1 client, the default) or fetch (the runtime's fetch), or unset it")) + "\n");
    return ExitCode.USAGE;
  }
  // What a measuring process must start with and this one did not (a `bench rounds` cell inherits
  // the fetch cap from its parent, but not a closed loop's collector setting).
  const startEnv = runtime.name === "bun" && MANY_STREAMS.has(argv[0] ?? "")
    ? measuringStartEnv((n) => runtime.env(n), runtime.version, closedLoopStreams(parsed as Record<string, unknown>))
    : {};
  if (Object.keys(startEnv).length > 0) {
    // Bun's fetch opens at most 256 connections at once unless this is set when the process
    // starts: request 257 would wait inside fetch and its wait would be counted as TTFT. The
    // collector's setting for a closed loop of many streams, read at start too (_start_env.ts).
    // One process: ik becomes itself again with the settings (execve; same pid, nothing waits).
    // IK_LAUNCHER=1 keeps a launcher waiting on a worker instead (~55 MB more), which can say what
    // happened and where the journal is if the worker is SIGKILLed; it is also the fallback where
    // execve cannot be called.
    const why = runtime.env("IK_LAUNCHER") === "1" ? "IK_LAUNCHER=1" : runtime.execSelfWithEnv(startEnv);
    if (runtime.env("IK_DEBUG") === "1") runtime.writeStderr(`ik: debug: a launcher waits on a worker (${why})\n`);
    // Only a launcher needs these (and the store and process-table code they read): loaded here.
    const { killedWorkerLine, stopLeftovers, watchWorker, workerWasKilled } = await import("./lib/cli/worker_exit.ts");
    const watch = watchWorker(argv, parsed as Record<string, unknown>, (n) => runtime.env(n), runtime.cwd());
    // What the worker leaves when it is killed reparents here, not to init (see stopLeftovers).
    runtime.childSubreaper();
    const worker = await runtime.reexecWorker(startEnv);
    // A worker killed by a signal it was not handed (SIGKILL: the OOM killer, kill -9) said
    // nothing: say what happened and where its journal is. The code stays 128 + n.
    if (workerWasKilled(worker.signal)) {
      // First end what it left (a cell's bench serve child then finishes its own record), then look.
      await stopLeftovers(runtime);
      runtime.writeStderr(scrubText(killedWorkerLine(watch, worker.pid, worker.signal) ?? "") + "\n");
    }
    return worker.code;
  }
  const ac = new AbortController();
  let interrupted = false;
  let firstSignalAt = 0;
  const onSig = () => {
    // A second signal means "leave now", unless it is the same Ctrl-C arriving twice (a terminal
    // signals the whole group, and a re-executing parent passes it on too).
    if (interrupted && performance.now() - firstSignalAt > DUPLICATE_SIGNAL_MS) runtime.exit(ExitCode.INTERRUPTED);
    if (interrupted) return;
    interrupted = true;
    firstSignalAt = performance.now();
    ac.abort(new Error("interrupted"));
    // Commands finish their journals on abort; if one does not return in time, leave anyway
    // (runtime.exit kills every spawned engine group on the way out).
    setTimeout(() => runtime.exit(ExitCode.INTERRUPTED), GRACE_MS);
  };
  const offs = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((s) => runtime.onSignal(s, onSig));
  // Re-executed by a parent ik (see MANY_STREAMS): if it dies without passing a signal on
  // (SIGKILL, OOM), end as if interrupted, and leave within 1.5 s whatever is still running.
  const parentPid = Number(runtime.env("IK_REEXEC_PARENT") ?? "");
  const watch = parentPid > 0
    ? setInterval(() => {
      if (runtime.pidAlive(parentPid)) return;
      onSig();
      setTimeout(() => runtime.exit(ExitCode.INTERRUPTED), 1500);
    }, 250)
    : undefined;
  (watch as unknown as { unref?: () => void } | undefined)?.unref?.();
  const args = parsed as Parameters<typeof dispatch>[1];
  const json = Boolean((args as { json?: boolean }).json);
  try {
    const code = await dispatch(makeContext(runtime, json, ac.signal), args);
    return interrupted ? ExitCode.INTERRUPTED : code;
  } finally {
    clearInterval(watch);
    for (const off of offs) off();
  }
}

/**
 * The error line's command (the deepest one argv's leading words name: `bench serve`) and, for an
 * unknown option, the hint for it there (a near miss of its own options, or what ik calls another
 * tool's flag) in place of optique's top-level one, which knows only command names.
 */
function withOptionHint(cliParser: unknown, argv: readonly string[], text: string): { text: string; path: string } {
  const { path, names } = commandOptions(cliParser as never, argv);
  const where = path.join(" ");
  const m = /Unexpected option or (?:subcommand|argument): [`"](-[^`"]*)[`"]/.exec(text);
  if (!m || !path.length) return { text, path: where };
  const hint = optionHint(where, m[1], names);
  const head = `unknown option \`${m[1].replace(/=.*$/, "")}\``;
  return { text: hint ? `${head}. ${hint}` : head, path: where };
}

/**
 * Maps an uncaught error to its line and exit code; a bug's stack goes to a log file the line names.
 * A write that failed on a full or read-only disk is no bug: exit 74 naming the path.
 */
export async function reportError(e0: unknown): Promise<number> {
  const e = isUnhandledWriteFailure(e0) ? outputError(e0) : e0;
  if (e instanceof IkError) {
    runtime.writeStderr(scrubText(e.oneLine()) + "\n");
    if (runtime.env("IK_DEBUG") === "1") runtime.writeStderr(scrubText(String(e.stack)) + "\n");
    return e.code;
  }
  const msg = scrubText(e instanceof Error ? e.message : String(e));
  const log = join(tmpdir(), `ik-crash-${runtime.pid()}.log`);
  // Users are asked to send this file in: argv and the stack go through the scrubber too.
  registerArgvSecrets(runtime.args(), (n) => runtime.env(n));
  const stack = scrubText(String((e as Error)?.stack ?? e));
  const detail = `${new Date().toISOString()} ik ${VERSION} ${runtime.name} ${runtime.version}\nargv: ${
    scrubArgv(runtime.args()).join(" ")
  }\n${stack}\n`;
  const saved = await runtime.files.writeText(log, detail, { mode: 0o600 }).then(() => true, () => false);
  const hint = saved
    ? `please report it with the log ${log}`
    : "please report it, with the output of IK_DEBUG=1";
  runtime.writeStderr(formatErrorLine("internal error", msg, hint) + "\n");
  if (runtime.env("IK_DEBUG") === "1") runtime.writeStderr(stack + "\n");
  return ExitCode.INTERNAL;
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(runtime.args());
  } catch (e) {
    code = await reportError(e);
  }
  runtime.exit(code);
}
