/**
 * A launched engine as ik keeps it (its process group, its exit once seen, what it may have left
 * behind): the type the launcher and the stop share, in its own file so neither imports the other
 * for it.
 * @module
 */
import type { ExitStatus, ProcessGroup, SubreaperState } from "../runtime/mod.ts";

/** A launched engine. */
export interface LaunchedEngine {
  /** Its process group (the leader's pid is the group id). */
  group: ProcessGroup;
  /** The exit status once it has exited, else null (kept current by a watcher). */
  exit: ExitStatus | null;
  /** Whether ik was a child subreaper when it launched the engine (orphans then reparent to ik). */
  subreaper: SubreaperState;
  /** `pid:start` of ik's adopted children before the launch: not this engine's, never killed by its stop. */
  adoptedBefore: Set<string>;
  /** The engine leader's start time (clock ticks), or -1: an orphan of this engine started later. */
  startTicks: number;
  /** Without subreaping: descendants seen while it ran (pid → start ticks), for the stop to end. */
  tracked: Map<number, number>;
  /** Stops the /proc poll that fills {@link tracked}. */
  untrack: () => void;
}
