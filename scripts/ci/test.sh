#!/bin/sh
# `npm test`: build, then every tap file, with the type check of src/, scripts/ and test/ running beside tap
# (tsc uses one core; tap keeps both busy, so the check costs little wall time there). Exits non-zero when the
# build, the type check or any test fails. Arguments go to tap (`npm test -- --jobs=8`).
set -u
# Node's compile cache: ~170 test processes and the gateways they start load the same modules (absolute path:
# tests start processes in temporary directories).
export NODE_COMPILE_CACHE="$PWD/node_modules/.cache/node-compile-cache"
npm run build || exit 1
# tap compiles its Test class for the plugins package.json names (no @tapjs/typescript: tests load tsx). `npm ci`
# installs it built for tap's default set, and the run that notices starts every test file with the old set's
# loaders (ts-node: twice the CPU of the whole suite) before rebuilding for the next run. So build it first (~5 s).
tap build > /dev/null || exit 1
typecheck_log=$(mktemp)
npm run --silent typecheck > "$typecheck_log" 2>&1 &
typecheck=$!
node --import tsx scripts/ci/warm-transpile-cache.ts || exit 1
tap "$@"
tests=$?
if wait "$typecheck"; then checked=0; else checked=1; fi
if [ "$checked" -ne 0 ]; then echo "npm run typecheck failed:"; cat "$typecheck_log"; fi
rm -f "$typecheck_log"
[ "$tests" -eq 0 ] && [ "$checked" -eq 0 ]
