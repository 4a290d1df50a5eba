/**
 * An independent model of MOCK.md's batching simulator (written from the spec, not from
 * lib/mock/simulator.ts), for predicting p95 TTFT at a load: steps
 * of A ms; at each step's start waiting requests are admitted in arrival order while fewer than B
 * run; every running request gets one token at the step's end (the first token ends its first
 * step); with nothing to do the engine idles until the next arrival.
 */

/** p95 TTFT (ms) the simulator should show for these arrivals (B slots, steps of A ms, L tokens each). */
export function predictedTtftP95(arrivalsMs: ArrayLike<number>, b: number, stepMs: number, tokens: number): number {
  const waiting: number[] = [];
  const running: { arrival: number; left: number; first: boolean }[] = [];
  const ttft: number[] = [];
  let t = 0, next = 0;
  const n = arrivalsMs.length;
  while (next < n || waiting.length || running.length) {
    if (!waiting.length && !running.length) t = Math.max(t, arrivalsMs[next]);
    while (next < n && arrivalsMs[next] <= t) waiting.push(arrivalsMs[next++]);
    while (running.length < b && waiting.length) running.push({ arrival: waiting.shift() as number, left: tokens, first: true });
    t += stepMs;
    for (const r of running) {
      if (r.first) {
        ttft.push(t - r.arrival);
        r.first = false;
      }
      r.left--;
    }
    for (let i = running.length - 1; i >= 0; i--) if (running[i].left <= 0) running.splice(i, 1);
  }
  ttft.sort((x, y) => x - y);
  return ttft[Math.min(ttft.length - 1, Math.ceil(0.95 * ttft.length) - 1)];
}

