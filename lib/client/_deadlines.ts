/**
 * One timer for every request's limits (the whole-request limit, the silence limit, the grace after
 * `[DONE]`), instead of two or three timers per request: at 1,000 streams those were 2,000 timer
 * objects and their closures, each living as long as its request (issue 21: what one open stream
 * holds). The timer is set for the earliest time any request asked to be looked at; when it fires,
 * every request is asked what is due (it acts on that itself) and when to look again. A request
 * whose silence limit keeps moving (bytes keep coming) is looked at once per limit, not once per
 * byte. The timer keeps the process alive only while a request is watched.
 * @module
 */

/** When to look again at a request whose check threw (its limits stay watched). */
const RETRY_AFTER_THROW_MS = 1000;

/** Something with limits in time. */
export interface Watched {
  /**
   * Acts on whatever limit is due now and says in how many ms to look again, or null when it needs
   * no more looks (it ended, or a limit ended it).
   */
  due(): number | null;
}

/** The shared timer: requests are added when they start and removed when they end. */
export class DeadlineWatch {
  readonly #items = new Set<Watched>();
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** When the timer fires, on {@link performance.now}; Infinity when it is not set. */
  #at = Infinity;
  readonly #fire = () => this.#check();

  /** Watches `w`, first looked at in `inMs` (or earlier, when another request's time comes first). */
  add(w: Watched, inMs: number): void {
    this.#items.add(w);
    this.#arm(performance.now() + Math.max(0, inMs));
  }

  /** Stops watching `w` (a request that ended); the timer stops with the last one. */
  remove(w: Watched): void {
    this.#items.delete(w);
    if (this.#items.size === 0 && this.#timer !== null) {
      clearTimeout(this.#timer);
      this.#timer = null;
      this.#at = Infinity;
    }
  }

  /** Requests watched now (tests). */
  get size(): number {
    return this.#items.size;
  }

  #arm(at: number): void {
    if (at >= this.#at) return;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#at = at;
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(at - performance.now())));
  }

  #check(): void {
    this.#timer = null;
    this.#at = Infinity;
    let soonest = Infinity;
    for (const w of this.#items) {
      let next: number | null;
      try {
        next = w.due();
      } catch {
        // A check that failed is not a request without limits: look again later.
        next = RETRY_AFTER_THROW_MS;
      }
      if (next === null) this.#items.delete(w);
      else if (next < soonest) soonest = next;
    }
    if (soonest !== Infinity) this.#arm(performance.now() + Math.max(0, soonest));
  }
}

/** The process's one watch over the streaming loop's requests. */
export const deadlines = new DeadlineWatch();
