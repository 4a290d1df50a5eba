/**
 * The flags and parser of `ik bench points`, and their parsed type. Parser only: the run is
 * bench_points.ts.
 * @module
 */
import { object } from "@optique/core/constructs";
import { message } from "@optique/core/message";
import { optional, withDefault } from "@optique/core/modifiers";
import type { InferValue } from "@optique/core/parser";
import { command, constant, option } from "@optique/core/primitives";
import { choice, float, string } from "@optique/core/valueparser";
import { liveFlags } from "./live_flags.ts";
import { pathValue } from "../cli/path_value.ts";

const flags = () => ({
  cmd: constant("bench-points" as const),
  base: option("--base", "--base-url", string({ metavar: "URL" }), { description: message`Router or fleet root, e.g. http://127.0.0.1:18000 (stored only as an HMAC; never with a token in it).` }),
  model: option("--model", string({ metavar: "M" }), { description: message`The served model every point must find in /v1/models.` }),
  plan: option("--plan", pathValue("FILE"), { description: message`The plan: {schema: 1, points: [{id, workload: {file, rate_rps, requests}, client_argv, client_timeout_s, drain_timeout_s}]}.` }),
  out: option("--out", pathValue("DIR"), { description: message`A new private output folder (an existing one is refused).` }),
  apiKeyEnv: optional(option("--api-key-env", string({ metavar: "NAME" }), { description: message`Environment variable with the bearer token for the runner's own probes (the client reads its own).` })),
  readyPath: withDefault(option("--ready-path", pathValue("PATH"), { description: message`Readiness path.` }), "/ready"),
  statePath: withDefault(option("--state-path", pathValue("PATH"), { description: message`Router state path answering {admission, resident}.` }), "/state"),
  drainSource: withDefault(option("--drain-source", choice(["state", "metrics"] as const), { description: message`Where outstanding work is read: the router's state, or Prometheus gauges (every known running + waiting gauge summed).` }), "state" as const),
  metricsPath: withDefault(option("--metrics-path", pathValue("PATH"), { description: message`Prometheus path for --drain-source metrics (TensorRT-LLM: /prometheus/metrics).` }), "/metrics"),
  pollS: withDefault(option("--poll-s", float({ min: 0.01, max: 60, metavar: "S" }), { description: message`Drain poll interval, seconds.` }), 0.5),
  json: option("--json", { description: message`Print the outcome as JSON.` }),
  ...liveFlags(),
});

/** Builds the parser for `ik bench points` (a fresh one per call: nothing keeps it once the arguments are parsed). */
export const benchPointsCommand = () => command("points", object(flags()), {
  brief: message`Ordered benchmark points against a running router/fleet: preflight, drain, external client per point, drain.`,
  description: message`For each point: /ready and /v1/models, wait for zero admission and resident work, run client_argv directly (no shell; {base} {model} {point_id} {point_dir} {ik} substituted) with its timeout, then wait for the fleet to drain. A refused readiness, a model mismatch, a non-zero client exit (2: attainment or scheduling failed) or a drain timeout stops the sequence. Never stops the router or engines. Writes manifest.json and <point>/result.json, client.stdout, client.stderr.`,
});

/** The parsed flags of `ik bench points`. */
export type BenchPointsFlags = InferValue<ReturnType<typeof benchPointsCommand>>;
