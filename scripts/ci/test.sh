#!/bin/sh
# `npm test`: build, then every tap file, with the type check of src/, scripts/ and test/ running beside tap
# (tsc uses one core; tap keeps both busy, so the check costs little wall time there). Exits non-zero when the
# build, the type check or any test fails. Arguments go to tap (`npm test -- --jobs=8`).
set -u
# Node's compile cache: ~170 test processes and the gateways they start load the same modules (absolute path:
# tests start processes in temporary directories).
export NODE_COMPILE_CACHE="$PWD/node_modules/.cache/node-compile-cache"
npm run build || exit 1
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
