#!/usr/bin/env bash
# npm run bench:node-lag: bundles benchmarks/node_lag/run.ts for Node and runs it on the Node the Node
# build embeds (NODE=path for another). Report only.
set -euo pipefail
cd "$(dirname "$0")/../.."
node_bin=${NODE:-$(ls -d .bun-cache/ik-release/node-linux-*@*/bin/node 2>/dev/null | head -1)}
if [ -z "$node_bin" ] || [ ! -x "$node_bin" ]; then
  echo "bench:node-lag: no Node found; run 'bun scripts/release.ts --host-node-only' first (it caches Node), or set NODE" >&2
  exit 69
fi
out=$(mktemp -d "${TMPDIR:-/tmp}/ik-node-lag-XXXXXX")
trap 'rm -rf "$out"' EXIT
# `run.sh` alone: the client and server variants (run.ts); `run.sh stages [undici]`: ik's client
# against ik's mock, stage by stage (stages.ts).
entry=benchmarks/node_lag/run.ts
if [ "${1:-}" = stages ]; then entry=benchmarks/node_lag/stages.ts; shift; fi
./node_modules/.bin/bun build --target=node --format=esm "$entry" --outfile "$out/run.mjs" >/dev/null
if [ -n "${IK_NODE_LAG_PIN:-}" ]; then taskset -c 0 "$node_bin" "$out/run.mjs" "$@"; else "$node_bin" "$out/run.mjs" "$@"; fi
