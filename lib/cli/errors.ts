/** Errors a person reads: one line, `ik: <where>: <what>; <what to do>`, with the exit code they map to. */
import { ExitCode, type ExitCodeValue } from "./exit_codes.ts";

/** An expected failure with a place, a reason, a remedy and an exit code. */
export class IkError extends Error {
  /** The exit code this error maps to. */
  readonly code: ExitCodeValue;
  /** The file, line, flag or value concerned. */
  readonly where: string;
  /** What to do about it. */
  readonly hint: string;

  /** @param code exit code; @param where flag/file/value; @param what the problem; @param hint the remedy */
  constructor(code: ExitCodeValue, where: string, what: string, hint = "") {
    super(what);
    this.name = "IkError";
    this.code = code;
    this.where = where;
    this.hint = hint;
  }

  /** The single line printed on stderr. */
  oneLine(): string {
    return formatErrorLine(this.where, this.message, this.hint);
  }
}

/** Formats `ik: where: what; hint` on one line (newlines in parts are flattened). */
export function formatErrorLine(where: string, what: string, hint = ""): string {
  const flat = (s: string) => s.replace(/\s*\n\s*/g, " ").trim();
  const w = flat(where);
  return `ik: ${w ? w + ": " : ""}${flat(what)}${hint ? "; " + flat(hint) : ""}`;
}

/** A usage error (exit 64) naming the offending flag or word. */
export function usageError(where: string, what: string, hint = "see --help"): IkError {
  return new IkError(ExitCode.USAGE, where, what, hint);
}

/** A bad-input-data error (exit 65) naming the file and line. */
export function dataError(where: string, what: string, hint = "fix the file and rerun"): IkError {
  return new IkError(ExitCode.DATA, where, what, hint);
}

/** A service-unavailable error (exit 69). */
export function unavailableError(where: string, what: string, hint = "check that the server is up and the URL is right"): IkError {
  return new IkError(ExitCode.UNAVAILABLE, where, what, hint);
}
