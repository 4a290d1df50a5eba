/**
 * Executors: they are handed a `send` and decide when to call it (open loop on absolute
 * deadlines, closed loop), never importing the client.
 * @module
 */
export { DEFAULT_SPIN_MARGIN_MS, type PacerTimers, type Pacing, pacingOf, PRECISE_SPIN_MARGIN_MS, REAL_TIMERS, setPreciseSleep, SPIN_SLICE_MS, TIMER_MIN_SLEEP_MS, waitUntil } from "./pacer.ts";
export { type OpenLoopOptions, type OpenLoopOutcome, runOpenLoop } from "./open_loop.ts";
export { type ClosedLoopOptions, runClosedLoop } from "./closed_loop.ts";
export { loopBlockNote, loopBlockNoteOfRecord, type LoopLag, loopLagFromRecord, loopLagRecord, type LoopLagRecord, startLoopLag } from "./loop_lag.ts";
export { type CpuWaitReader, openCpuWaitReader, threadCpuWaitMs } from "./cpu_wait.ts";
export { TURN_WORK, TURN_WORK_BUDGET_MS, type TurnTask, TurnWork } from "./turn_work.ts";
