/**
 * What the in-process load-level tests share: a Runner against a fetch the test supplies (no
 * server), and the level's three JSONL writers in a folder.
 */
import { join } from "node:path";
import { Runner } from "../../lib/bench/runner.ts";
import { parseEndpoint } from "../../lib/client/endpoint.ts";
import { JsonlWriter } from "../../lib/evidence/mod.ts";

/** One SSE answer of one token, then [DONE]. */
export const ONE_TOKEN_SSE = 'data: {"choices":[{"index":0,"delta":{"content":"a"},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n';

/** A chat Runner for 4 tokens whose requests go to `fetch`. */
export function fakeRunner(fetch: (...a: unknown[]) => Promise<Response>, make: typeof Runner = Runner): Runner {
  return new make({
    ep: parseEndpoint("http://127.0.0.1:9/v1"), api: "chat", engineKind: "vllm", model: "m", maxTokens: 4, tokenIds: "off",
    exactLength: false, extraBody: {}, chatTemplateKwargs: {}, timeoutMs: 10_000, fetch,
  } as unknown as ConstructorParameters<typeof Runner>[0]);
}

/** requests.jsonl, outputs.jsonl and inputs.jsonl opened in `dir`. */
export async function levelWriters(dir: string): Promise<{ journal: JsonlWriter; outputs: JsonlWriter; inputs: JsonlWriter }> {
  const open = (f: string) => JsonlWriter.open(join(dir, f));
  const [journal, outputs, inputs] = await Promise.all([open("requests.jsonl"), open("outputs.jsonl"), open("inputs.jsonl")]);
  return { journal, outputs, inputs };
}
