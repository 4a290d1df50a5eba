#!/usr/bin/env bash
# benchmarks/client/run.sh — `npm run bench:client`: put ik's streaming client into the interleaved
# client-CPU-per-SSE-event benchmark of ../shared/perf (BASELINES.md, "Adding ik to the same runs").
#
#   bash benchmarks/client/run.sh [PEER_FILE] [--quick | --reps N] [--requests N] [other run_baselines.sh args]
#
# Same server (sse_server.mjs), same regimes (separate write per event = the main table, then the
# coalesced diagnostic), both concurrencies (1 and 64), one run: ik joins the rotation with vLLM's
# request function, the openai SDK (Node and Bun), the careful TS client and the C floor.
#
# PEER_FILE: vLLM's vllm/benchmarks/lib/endpoint_request_func.py, saved unmodified OUTSIDE this
#   repo (default /tmp/perf-peers/vllm/endpoint_request_func.py). It is never copied here. When
#   the default one is missing (and no PEER_FILE is named), the run goes on without vLLM's client:
#   ik, the careful TS client, the openai SDK where $PEERS_NODE has it, and the C floor, through
#   ../shared/perf/bench.py directly (the same server, pinning, requests and reps; no Python peers).
# Env: PERF_DIR (default <repo>/../shared/perf), OUT (default benchmarks/client/results, git-ignored),
#      PEERS_NODE (default /tmp/perf-peers/node), IK_BUN (default <repo>/node_modules/.bin/bun),
#      plus run_baselines.sh's BUILD and PORT_BASE.
# Missing peers (Debian apt: python3-aiohttp python3-tqdm python3-regex python3-numpy time; npm into
# $PEERS_NODE: openai@6.49.0 bun@1.4.5) are installed first, through run_baselines.sh --setup.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
PERF_DIR="${PERF_DIR:-$REPO/../shared/perf}"
PEERS_NODE="${PEERS_NODE:-/tmp/perf-peers/node}"
IK_BUN="${IK_BUN:-$REPO/node_modules/.bin/bun}"
export OUT="${OUT:-$HERE/results}" PEERS_NODE

PEER=/tmp/perf-peers/vllm/endpoint_request_func.py
NAMED=0
if [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; then PEER="$1"; NAMED=1; shift; fi

[ -x "$PERF_DIR/run_baselines.sh" ] || { echo "bench:client: $PERF_DIR/run_baselines.sh not found (set PERF_DIR)" >&2; exit 1; }
PERF_DIR="$(cd "$PERF_DIR" && pwd)"
NO_PEER=0
if [ ! -f "$PEER" ]; then
  if [ "$NAMED" = 1 ]; then
    echo "bench:client: peer file $PEER is missing: save vllm-project/vllm's vllm/benchmarks/lib/endpoint_request_func.py (unmodified, outside this repo) there, or leave the argument out to run without it" >&2
    exit 2
  fi
  echo "bench:client: $PEER is missing: vLLM's request function is left out of this run (save vllm-project/vllm's vllm/benchmarks/lib/endpoint_request_func.py there, unmodified, to include it)" >&2
  NO_PEER=1
fi
[ -x "$IK_BUN" ] || { echo "bench:client: $IK_BUN not found: run 'npm ci' in $REPO first (or set IK_BUN)" >&2; exit 1; }
case "$REPO$IK_BUN" in *[[:space:]]*) echo "bench:client: paths with spaces are not supported by bench.py's --extra template" >&2; exit 1 ;; esac

# Peers missing? Let run_baselines.sh install them (apt + npm, same commands as BASELINES.md).
SETUP=()
if [ "$NO_PEER" = 1 ]; then
  :
elif ! /usr/bin/python3 -c 'import aiohttp, tqdm, regex' 2>/dev/null || ! command -v /usr/bin/time >/dev/null \
   || [ ! -x "$PEERS_NODE/node_modules/.bin/bun" ] || [ ! -d "$PEERS_NODE/node_modules/openai" ]; then
  echo "bench:client: installing the peers (apt: python3-aiohttp python3-tqdm python3-regex python3-numpy time; npm: openai@6.49.0 bun@1.4.5 into $PEERS_NODE)"
  SETUP=(--setup)
fi

mkdir -p "$OUT"
IK_CMD="$IK_BUN $HERE/ik_bench.ts {port} {requests} {conc} {tokens} {timeout}"
stamp="$(date +%Y%m%d-%H%M%S)"
log="$OUT/bench-client-$stamp.log"
{
  echo "# bench:client $(date -Is) on $(uname -n) $(uname -r), $(nproc) CPUs; ik $(git -C "$REPO" describe --always --dirty 2>/dev/null || echo '?')"
  if [ "$NO_PEER" = 1 ]; then echo "# $PERF_DIR/bench.py without vLLM's client (no peer file) $* --extra 'ik=$IK_CMD'"
  else echo "# $PERF_DIR/run_baselines.sh $PEER ${SETUP[*]:-} $* --extra 'ik=$IK_CMD'"; fi
} | tee "$log"
touch "$log.start"
if [ "$NO_PEER" = 1 ]; then
  # run_baselines.sh's two runs, without the vLLM client (it needs the peer file and the Python peers).
  REPS=5; DIAG_REPS=3; REQUESTS=2000
  while [ $# -gt 0 ]; do
    case "$1" in
      --reps) REPS="$2"; DIAG_REPS="$2"; shift ;;
      --requests) REQUESTS="$2"; shift ;;
      --quick) REPS=1; DIAG_REPS=1; REQUESTS=200 ;;
      *) echo "bench:client: $1 is not taken without the peer file (only --reps N, --requests N, --quick)" >&2; exit 1 ;;
    esac; shift
  done
  command -v taskset >/dev/null && command -v gcc >/dev/null && command -v node >/dev/null \
    || { echo "bench:client: needs taskset, gcc and node" >&2; exit 1; }
  [ "$(nproc)" -ge 2 ] || { echo "bench:client: needs >= 2 cores (server on core 1, client on core 0)" >&2; exit 1; }
  BUILD="${BUILD:-/tmp/perf-build}"; PORT_BASE="${PORT_BASE:-18777}"
  mkdir -p "$BUILD"
  gcc -O2 -Wall -o "$BUILD/sse_floor" "$PERF_DIR/sse_floor.c"
  CLIENTS=ts-min-bun,c-floor-count,c-floor-content
  if [ -d "$PEERS_NODE/node_modules/openai" ]; then CLIENTS="openai-node,openai-bun,$CLIENTS"; fi
  common=(--peer /dev/null --clients "$CLIENTS" --floor-bin "$BUILD/sse_floor" --requests "$REQUESTS"
          --sdk-dir "$PEERS_NODE" --bun "$IK_BUN" --extra "ik=$IK_CMD")
  [ -x "$PEERS_NODE/node_modules/.bin/bun" ] && common+=(--bun "$PEERS_NODE/node_modules/.bin/bun")
  {
    echo "== main: separate write per SSE event, server core 1, client core 0, $REPS reps ($CLIENTS, ik)"
    taskset -c 1 /usr/bin/python3 "$PERF_DIR/bench.py" "${common[@]}" --reps "$REPS" --port "$PORT_BASE" --out "$OUT/streamed-$stamp.jsonl"
    echo "== diagnostic: whole response in ONE server write (parse-bound regime), $DIAG_REPS reps"
    taskset -c 1 /usr/bin/python3 "$PERF_DIR/bench.py" "${common[@]}" --reps "$DIAG_REPS" --port "$((PORT_BASE + 1))" --coalesce --out "$OUT/coalesced-$stamp.jsonl"
  } 2>&1 | tee -a "$log"
else
  "$PERF_DIR/run_baselines.sh" "$PEER" "${SETUP[@]}" "$@" --extra "ik=$IK_CMD" 2>&1 | tee -a "$log"
fi
# The two JSONL files this run wrote (run_baselines.sh stamps them itself), side by side with ik's ratios.
streamed="$(find "$OUT" -maxdepth 1 -name 'streamed-*.jsonl' -newer "$log.start" | sort | tail -1)"
coalesced="$(find "$OUT" -maxdepth 1 -name 'coalesced-*.jsonl' -newer "$log.start" | sort | tail -1)"
rm -f "$log.start"
if [ -n "$streamed" ]; then
  echo; /usr/bin/python3 "$HERE/summary.py" "$streamed" $coalesced | tee -a "$log"
fi
echo "bench:client: raw JSONL and this log are in $OUT ($(basename "$log"))"
