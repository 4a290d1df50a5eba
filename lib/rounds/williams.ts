/**
 * The order of engines inside each round of `ik bench rounds` (seed 001): a Williams design.
 *
 * A GPU drifts during a session, and the server that runs first after an idle GPU, or right
 * after another one heated it, is not in the same position as the others. So every round runs
 * every engine once, in an order from a Williams square: each engine takes each position equally
 * often, and each ordered pair "B right after A" occurs equally often. One square balances both
 * when n is even; for odd n the mirrored rows are appended, so a balanced block (the period) is n
 * rounds for even n and 2n for odd n. Rounds that are not a multiple of the period still run, with
 * `balanced: false` recorded.
 * @module
 */

/** Name of the design, as recorded in plan.json. */
export const DESIGN_NAME = "williams";

/**
 * Rows of the Williams design for `n` treatments (indices 0…n−1), exactly as the seed builds it:
 * the first row is 0, 1, n−1, 2, n−2, 3, …; row i adds i to every entry (mod n); for odd n the
 * n reversed rows follow. n ≤ 0 gives no rows, n = 1 the single row [0].
 * @example williamsSquare(4) // [[0,1,3,2],[1,2,0,3],[2,3,1,0],[3,0,2,1]]
 */
export function williamsSquare(n: number): number[][] {
  if (!Number.isInteger(n) || n <= 0) return [];
  if (n === 1) return [[0]];
  const first = [0];
  let low = 1;
  let high = n - 1;
  // Alternate between the next unused low index and the next unused high one.
  for (let takeLow = true; first.length < n; takeLow = !takeLow) {
    first.push(takeLow ? low++ : high--);
  }
  const rows = Array.from({ length: n }, (_, i) => first.map((x) => (x + i) % n));
  if (n % 2 === 1) rows.push(...rows.map((row) => [...row].reverse()));
  return rows;
}

/** The design's period: rounds in one balanced block (n for even n, 2n for odd n, 0 for none). */
export function williamsPeriod(n: number): number {
  if (!Number.isInteger(n) || n <= 0) return 0;
  return n === 1 ? 1 : n % 2 === 0 ? n : 2 * n;
}

/** The design recorded in plan.json: one engine order per round. */
export interface RoundDesign {
  /** Always {@link DESIGN_NAME}. */
  design: typeof DESIGN_NAME;
  /** The labels in running order, one list per round (round k is `orders[k - 1]`). */
  orders: string[][];
  /** Rounds in one balanced block. */
  period: number;
  /** Whether the number of rounds is a whole number of periods (false for no engines). */
  balanced: boolean;
}

/**
 * The engine order of each of `rounds` rounds: round r (from 0) uses row r mod period.
 * @example roundOrders(["a", "b"], 3).orders // [["a","b"],["b","a"],["a","b"]], balanced false
 */
export function roundOrders(labels: readonly string[], rounds: number): RoundDesign {
  const square = williamsSquare(labels.length);
  const period = square.length;
  const count = Math.max(0, Math.floor(rounds));
  const orders = period ? Array.from({ length: count }, (_, r) => square[r % period].map((i) => labels[i])) : [];
  return { design: DESIGN_NAME, orders, period, balanced: period > 0 && count % period === 0 };
}

/**
 * The smallest multiple of the Williams period for `nEngines` that is at least `minimum`
 * (default 3): 2 engines → 4, 3 → 6, 4 → 4, 1 → 3.
 */
export function defaultRounds(nEngines: number, minimum = 3): number {
  const period = williamsPeriod(nEngines) || 1;
  return period * Math.max(1, Math.ceil(minimum / period));
}

/** How often engine `b` ran right after engine `a` inside a round, keyed `"a>b"`. */
export function carryoverCounts(orders: readonly (readonly string[])[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const row of orders) {
    for (let i = 1; i < row.length; i++) {
      const key = `${row[i - 1]}>${row[i]}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  }
  return counts;
}

/** What {@link checkBalance} found; `problems` is empty for a balanced block. */
export interface BalanceReport {
  /** True when every check passed. */
  ok: boolean;
  /** One sentence per failed check. */
  problems: string[];
}

/**
 * Checks that `orders` is a balanced block for `labels`: every round runs each engine exactly
 * once; each engine holds each position equally often; and each ordered pair of different
 * engines (a right before b) occurs equally often, with no other pair present.
 */
export function checkBalance(labels: readonly string[], orders: readonly (readonly string[])[]): BalanceReport {
  const problems: string[] = [];
  const n = labels.length;
  orders.forEach((row, r) => {
    const seen = [...row].sort().join(",");
    if (row.length !== n || seen !== [...labels].sort().join(",")) {
      problems.push(`round ${r + 1} does not run every engine exactly once: ${row.join(",")}`);
    }
  });
  if (problems.length || n === 0) return { ok: problems.length === 0, problems };
  for (let pos = 0; pos < n; pos++) {
    const counts = labels.map((l) => orders.filter((row) => row[pos] === l).length);
    if (new Set(counts).size > 1) problems.push(`position ${pos + 1} is held unequally often: ${counts.join(",")}`);
  }
  const carry = carryoverCounts(orders);
  const expected: number[] = [];
  for (const a of labels) for (const b of labels) if (a !== b) expected.push(carry.get(`${a}>${b}`) ?? 0);
  const pairs = n * (n - 1);
  const total = [...carry.values()].reduce((s, x) => s + x, 0);
  if (new Set(expected).size > 1 || expected.reduce((s, x) => s + x, 0) !== total) {
    problems.push(`carry-over pairs are unequal: ${pairs} ordered pairs with counts ${expected.join(",")}`);
  }
  return { ok: problems.length === 0, problems };
}
