#!/usr/bin/env bash
# Builds ik for one target.
#   scripts/build.sh                                      dist/ik, a single-file executable for this host
#   scripts/build.sh --target bun-linux-arm64 --outfile dist/ik-linux-arm64     cross-compiled executable
#   scripts/build.sh --target node-linux-arm64 --outfile X.mjs   the ESM bundle for a Node single executable
#                                                         (scripts/release.ts turns it into one)
#   --label NAME  reports NAME as the target in `ik --version` (default: the target)
#   --fault NAME  a mutation build for the selftest mutation test: the client measures one thing wrong
#                 on purpose (lib/client/_fault.ts). NAME is one of: kfirst-ignored events-as-ids
#                 no-count-mismatch ttft-plus-5ms tpot-plus-5pct clock-skew-50ms usage-trusted (clock-skew-50ms:
#                 a sharded load run paces 50 ms ahead of its recorded clock, for the merge's skew test;
#                 usage-trusted: a usage below the token events is the count). Never for release: every other build
#                 defines the fault as "" so the minifier folds the fault branches away.
set -euo pipefail
cd "$(dirname "$0")/.."
target=""; outfile="dist/ik"; label=""; fault=""
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift ;;
    --outfile) outfile="$2"; shift ;;
    --label) label="$2"; shift ;;
    --fault) fault="$2"; shift ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 64 ;;
  esac; shift
done
# The names lib/client/_fault.ts knows (tests/client/fault_switch.test.ts checks the two lists agree).
case "$fault" in
  ""|kfirst-ignored|events-as-ids|no-count-mismatch|ttft-plus-5ms|tpot-plus-5pct|clock-skew-50ms|usage-trusted) ;;
  *) echo "build.sh: unknown --fault '$fault' (one of: kfirst-ignored events-as-ids no-count-mismatch ttft-plus-5ms tpot-plus-5pct clock-skew-50ms usage-trusted)" >&2; exit 64 ;;
esac
if [ -n "$fault" ] && [ "$outfile" = "dist/ik" ]; then
  echo "build.sh: a --fault build needs its own --outfile (dist/ik is the real binary)" >&2; exit 64
fi
version=$(node -p 'require("./package.json").version')
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ "$rev" != unknown ] && [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null || true)" ]; then rev="$rev-dirty"; fi
# A --fault build made by a test beside a binary under test takes that binary's rev (IK_FAULT_REV),
# so a slice of each can be merged: the working tree may have moved on since that binary was built.
if [ -n "$fault" ] && [ -n "${IK_FAULT_REV:-}" ]; then rev=$IK_FAULT_REV; fi
host_label="bun-$(uname -s | tr 'A-Z' 'a-z')-$(uname -m | sed 's/x86_64/x64/;s/aarch64/arm64/')"
label=${label:-${target:-$host_label}}
# A pinned cache keeps cross-target runtimes (fetched from the npm registry) out of $HOME and repeatable.
export BUN_INSTALL_CACHE_DIR="${BUN_INSTALL_CACHE_DIR:-$PWD/.bun-cache}"
mkdir -p "$(dirname "$outfile")"
defines=(--define "__IK_VERSION__=\"$version\"" --define "__IK_GIT_REV__=\"$rev\"" --define "__IK_TARGET__=\"$label\""
  --define "__IK_CLIENT_FAULT__=\"$fault\"")
case "$target" in
  node-*)
    # No --bytecode (Bun's bytecode is for Bun only). ESM: cli.ts has a top-level await, which CJS cannot hold.
    args=(build --target=node --format=esm --minify "${defines[@]}" scripts/node_entry.ts --outfile "$outfile") ;;
  *)
    # No autoloaded .env or bunfig.toml: a file in the user's working directory must not change
    # what ik measures or sends (an env var, a proxy, Bun's own settings) without being asked.
    # --smol (JSC's smaller heap sizing, the binary's own runtime flag): peak RSS at 1,000 streams
    # 208-220 -> 178-186 MB, CPU and loop lag unchanged, and unchanged at 2,000 req/s (issue 21,
    # benchmarks/memory/RESULTS.md).
    # --splitting: each command's module (lib/commands/mod.ts imports it with `await import`) is its
    # own chunk inside the binary, read only when that command runs. Without it one bundle wraps
    # every module for lazy init, and start-up RSS rose 2.5-3 MB (file pages of the bytecode).
    args=(build --compile --splitting --minify --bytecode --format=esm --no-compile-autoload-dotenv --no-compile-autoload-bunfig
      --compile-exec-argv=--smol "${defines[@]}" cli.ts --outfile "$outfile")
    [ -n "$target" ] && args+=(--target "$target") ;;
esac
./node_modules/.bin/bun "${args[@]}" >/dev/null
echo "built $outfile ($label, rev $rev${fault:+, client fault $fault})" >&2
