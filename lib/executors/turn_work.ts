/**
 * One time budget a turn of the event loop for the work that can wait: recording a level's
 * finished requests (lib/bench/completion_queue.ts) and turning journal rows into JSON
 * (lib/evidence/jsonl_writer.ts). Each of them once had its own 2 ms a turn, and they ran on the
 * same turn one after the other: in a closed loop of 1,000 equal streams, where the streams end
 * together, the completion queue, the rows' journal, the outputs' journal and the inputs' journal
 * each spent its 2 ms, up to ~8 ms in which no socket was read and no token timestamped (a CPU
 * profile beside the loop-lag trace showed 7 ms of journal encoding in one turn; issue 21, goal 3).
 * Now they share one budget: a turn runs the queued tasks in rotation until
 * {@link TURN_WORK_BUDGET_MS} is spent, and whatever is left waits for a later turn, after the
 * sockets have been read.
 * @module
 */
import { setImmediate } from "node:timers";

/** Work that can wait, allowed per turn of the event loop for all of it together, ms. */
export const TURN_WORK_BUDGET_MS = 2;

/**
 * A share of deferred work: does some of it (at least one item, so work always moves), stopping
 * once `performance.now()` (the scheduler's clock) reaches `untilMs`, and says whether any is left.
 */
export type TurnTask = (untilMs: number) => boolean;

/** Runs queued {@link TurnTask}s under one per-turn budget. */
export class TurnWork {
  /** Tasks in the order their turn comes. */
  #queue: TurnTask[] = [];
  /** Tasks queued or running this turn (a task is queued once however often it is scheduled). */
  readonly #member = new Set<TurnTask>();
  #armed = false;

  /**
   * @param budgetMs work per turn for all tasks together (default {@link TURN_WORK_BUDGET_MS})
   * @param clock monotonic ms (default performance.now)
   * @param nextTurn runs its callback on a later turn (default setImmediate: after the poll for I/O)
   */
  constructor(
    readonly budgetMs = TURN_WORK_BUDGET_MS,
    private readonly clock: () => number = () => performance.now(),
    private readonly nextTurn: (f: () => void) => void = (f) => void setImmediate(f),
  ) {}

  /** Tasks waiting for a turn. */
  get pending(): number {
    return this.#member.size;
  }

  /** Queues `task` for a coming turn; a task already queued keeps its place. */
  schedule(task: TurnTask): void {
    if (this.#member.has(task)) return;
    this.#member.add(task);
    this.#queue.push(task);
    this.#arm();
  }

  #arm(): void {
    if (this.#armed || this.#queue.length === 0) return;
    this.#armed = true;
    this.nextTurn(() => this.#turn());
  }

  /**
   * One turn: tasks run in queue order while the budget lasts (the first always runs); one that
   * has more to do goes to the back, those not reached keep their place at the front. A task that
   * throws is dropped, the others still run, and the first error is thrown once the queue is in
   * order again (as a timer's would be).
   */
  #turn(): void {
    this.#armed = false;
    const until = this.clock() + this.budgetMs;
    const tasks = this.#queue;
    this.#queue = [];
    const again: TurnTask[] = [];
    let error: { e: unknown } | null = null;
    let i = 0;
    for (; i < tasks.length; i++) {
      if (i > 0 && this.clock() >= until) break;
      const task = tasks[i];
      let more = false;
      try {
        more = task(until);
      } catch (e) {
        error ??= { e };
      }
      if (more) again.push(task);
      else this.#member.delete(task);
    }
    // Not reached, then those with more to do, then any scheduled while this turn ran.
    this.#queue = [...tasks.slice(i), ...again, ...this.#queue];
    this.#arm();
    if (error !== null) throw error.e;
  }
}

/** The process's one budget for deferred work (the completion queue and every journal writer share it). */
export const TURN_WORK = new TurnWork();
