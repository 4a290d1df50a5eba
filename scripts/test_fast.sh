#!/usr/bin/env bash
# npm run test:fast: every unit and in-process test on both runtimes, with no compiled binary, no
# `ik mock` process and no real engine: the test files that do not run ik end to end (those that
# use runIk, ikBin, ikVariants, runArgv, startMock or startLlama, or name dist/ik, are left to
# `npm test` and .ci/run). For the loop of someone changing the code; CI runs everything.
set -u
cd "$(dirname "$0")/.."
mapfile -t files < <(grep -rLE 'ikVariants|runIk\(|ikBin\(|runArgv\(|startMock\(|startLlama|dist/ik' tests --include='*.test.ts' | sort)
echo "test:fast: ${#files[@]} in-process test files (of $(find tests -name '*.test.ts' | wc -l))" >&2
./node_modules/.bin/bun test --timeout 120000 "${files[@]}"
bun_rc=$?
./node_modules/.bin/deno test -A "${files[@]}"
deno_rc=$?
[ $bun_rc -eq 0 ] && [ $deno_rc -eq 0 ]
