/**
 * `--bucket-by input:E1,E2,...`: a dataset's prompts split into buckets by their counted input
 * tokens instead of one bucket per dataset. Edges ascend; a prompt of n tokens goes to the first
 * edge it does not pass (`<name>-le<E>`), past the last one to `<name>-gt<Elast>`, and a prompt
 * whose length was not counted (a multi-message JSONL line) to `<name>-uncounted`.
 * @module
 */

/** Parsed `--bucket-by`. */
export interface BucketBy {
  by: "input";
  edges: number[];
}

/**
 * Parses `input:128,512,2048`.
 * @throws RangeError with the reason (the caller makes it a usage error)
 */
export function parseBucketBy(spec: string): BucketBy {
  const m = /^input:([0-9, ]+)$/.exec(spec.trim());
  if (!m) throw new RangeError(`'${spec}' is not input:E1,E2,... (e.g. input:128,512,2048)`);
  const edges = m[1].split(",").map((s) => s.trim()).filter(Boolean).map(Number);
  if (!edges.length || edges.some((e) => !Number.isInteger(e) || e < 1)) throw new RangeError(`'${spec}': edges must be positive whole numbers of tokens`);
  for (let i = 1; i < edges.length; i++) if (edges[i] <= edges[i - 1]) throw new RangeError(`'${spec}': edges must ascend`);
  return { by: "input", edges };
}

/** The bucket of a prompt of `inputTokens` (undefined when not counted). */
export function bucketFor(name: string, b: BucketBy | undefined, inputTokens: unknown): string {
  if (!b) return name;
  if (typeof inputTokens !== "number") return `${name}-uncounted`;
  const e = b.edges.find((x) => inputTokens <= x);
  return e === undefined ? `${name}-gt${b.edges[b.edges.length - 1]}` : `${name}-le${e}`;
}
