/**
 * Where a level's finished requests are recorded (row, journal, accumulators, live series): on the
 * turn they end while this turn's share of {@link COMPLETION_BUDGET_MS} lasts, the rest on later
 * turns, in completion order, under the budget every deferred job shares (lib/executors/turn_work.ts:
 * the journals' encoding is the other). In a closed loop of equal lengths (and on a real server's
 * batch that ends on one step) hundreds of streams end on the same turn; recording them all there
 * blocked the loop for tens of ms, and every token that arrived meanwhile was timestamped late.
 * The measurement itself is over before a job is queued: only the bookkeeping waits.
 * @module
 */
import { TURN_WORK, type TurnWork } from "../executors/turn_work.ts";

/** Recording done at once, as requests end on one turn, before the rest waits for the turn work, ms. */
export const COMPLETION_BUDGET_MS = 2;

/** A FIFO of recording jobs run under a per-turn time budget. */
export class CompletionQueue {
  #jobs: (() => void)[] = [];
  #head = 0;
  #spent = 0;
  #armed = false;
  #error: unknown = null;
  #idle: (() => void)[] = [];

  /** This queue's share of the turn work: its jobs until the turn's budget is spent. */
  readonly #task = (untilMs: number): boolean => this.#turn(untilMs);

  /**
   * @param budgetMs jobs run at once, as they are pushed, on one turn (default {@link COMPLETION_BUDGET_MS})
   * @param clock monotonic ms (default performance.now)
   * @param work where the jobs that wait are run (default the process's {@link TURN_WORK})
   */
  constructor(
    private readonly budgetMs = COMPLETION_BUDGET_MS,
    private readonly clock: () => number = () => performance.now(),
    private readonly work: TurnWork = TURN_WORK,
  ) {}

  /** Jobs waiting. */
  get pending(): number {
    return this.#jobs.length - this.#head;
  }

  /** Runs `job` now if this turn has budget left and nothing waits, else on a later turn. */
  push(job: () => void): void {
    if (this.pending === 0 && this.#spent < this.budgetMs) {
      const t = this.clock();
      this.#run(job);
      this.#spent += this.clock() - t;
    } else this.#jobs.push(job);
    this.#arm();
  }

  /** Resolves once every job has run; rejects with the first error a job threw. */
  async drain(): Promise<void> {
    while (this.pending > 0) await new Promise<void>((ok) => this.#idle.push(ok));
    if (this.#error !== null) throw this.#error;
  }

  #run(job: () => void): void {
    try {
      job();
    } catch (e) {
      this.#error ??= e;
    }
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    this.work.schedule(this.#task);
  }

  /** Runs waiting jobs until `untilMs` (one at least); says whether any still wait. */
  #turn(untilMs: number): boolean {
    this.#armed = false;
    do {
      if (this.pending === 0) break;
      const job = this.#jobs[this.#head];
      this.#jobs[this.#head++] = undefined as unknown as () => void;
      this.#run(job);
    } while (this.clock() < untilMs);
    if (this.#head > 1024 && this.#head * 2 > this.#jobs.length) {
      this.#jobs = this.#jobs.slice(this.#head);
      this.#head = 0;
    }
    if (this.pending > 0) {
      this.#armed = true;
      return true;
    }
    // Nothing waits: no turn is scheduled (an idle queue costs nothing). A push later on this
    // same turn may run at once, so a turn does at most the turn's budget and this queue's.
    this.#spent = 0;
    for (const ok of this.#idle.splice(0)) ok();
    return false;
  }
}
