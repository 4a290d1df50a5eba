/** The one exit-code table (../shared/spec/CONTRACTS.md). Every command returns one of these. */
export const ExitCode = {
  /** The command did its job. */
  OK: 0,
  /** It ran, and its verdict is negative (a selftest check failed, a cell not ok). */
  VERDICT_NEGATIVE: 1,
  /** SLO or attainment not met (load-trial contract). */
  SLO_NOT_MET: 2,
  /** Usage error: unknown command or flag, bad value, conflicting flags. */
  USAGE: 64,
  /** Bad input data: malformed prompt set, manifest, record; failed integrity check. */
  DATA: 65,
  /** Service unavailable: server unreachable or not ready. */
  UNAVAILABLE: 69,
  /** Output cannot be written (EX_IOERR): a full or read-only disk, a vanished output folder. */
  IO_ERROR: 74,
  /** Internal error (a bug). */
  INTERNAL: 70,
  /** Interrupted by SIGINT/SIGTERM/SIGHUP; what finished is kept. */
  INTERRUPTED: 130,
} as const;

/** One of the codes in {@link ExitCode}. */
export type ExitCodeValue = typeof ExitCode[keyof typeof ExitCode];
