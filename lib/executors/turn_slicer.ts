/**
 * At most {@link START_SLICE} request starts per turn of the event loop. In a closed loop of equal
 * lengths every stream ends on the same turn, and each worker's next request would be set up on
 * that turn too (body, headers, the write): 1,000 of them block the loop for tens of ms, during
 * which no token is timestamped. A start over the slice waits for a later turn, in arrival order.
 * @module
 */
import { type PacerTimers, START_SLICE } from "./pacer.ts";

/** Hands out start permits, {@link START_SLICE} per turn. */
export class TurnSlicer {
  #used = 0;
  #armed = false;
  readonly #waiting: (() => void)[] = [];
  constructor(private readonly yieldNow: PacerTimers["yieldNow"], private readonly perTurn = START_SLICE) {}

  /** Resolves when this start may go: at once while the turn has permits, else on a later turn. */
  take(): Promise<void> | null {
    if (this.#used < this.perTurn && this.#waiting.length === 0) {
      this.#used++;
      this.#arm();
      return null;
    }
    this.#arm();
    return new Promise<void>((ok) => this.#waiting.push(ok));
  }

  #arm(): void {
    if (this.#armed) return;
    this.#armed = true;
    void this.yieldNow().then(() => this.#turn());
  }

  #turn(): void {
    this.#armed = false;
    const batch = this.#waiting.splice(0, this.perTurn);
    this.#used = batch.length;
    for (const go of batch) go();
    if (this.#waiting.length > 0 || this.#used > 0) this.#arm();
  }
}
