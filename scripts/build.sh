#!/usr/bin/env bash
# Builds the single-file executable for this host: dist/ik.
#   scripts/build.sh [--target bun-linux-x64|bun-linux-arm64|...] [--outfile PATH]
set -euo pipefail
cd "$(dirname "$0")/.."
target=""; outfile="dist/ik"
while [ $# -gt 0 ]; do
  case "$1" in
    --target) target="$2"; shift ;;
    --outfile) outfile="$2"; shift ;;
    *) echo "build.sh: unknown argument $1" >&2; exit 64 ;;
  esac; shift
done
version=$(node -p 'require("./package.json").version')
rev=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
if [ -n "$(git status --porcelain 2>/dev/null | grep -v '^??' || true)" ]; then rev="$rev-dirty"; fi
label=${target:-bun-$(uname -s | tr 'A-Z' 'a-z')-$(uname -m | sed 's/x86_64/x64/;s/aarch64/arm64/')}
# A pinned cache keeps cross-target runtimes (fetched from the npm registry) out of $HOME and repeatable.
export BUN_INSTALL_CACHE_DIR="${BUN_INSTALL_CACHE_DIR:-$PWD/.bun-cache}"
mkdir -p "$(dirname "$outfile")"
args=(build --compile --minify --bytecode --format=esm
      --define "__IK_VERSION__=\"$version\"" --define "__IK_GIT_REV__=\"$rev\"" --define "__IK_TARGET__=\"$label\""
      cli.ts --outfile "$outfile")
[ -n "$target" ] && args+=(--target "$target")
./node_modules/.bin/bun "${args[@]}" >/dev/null
echo "built $outfile ($label, rev $rev)" >&2
