#!/usr/bin/env bash
# scripts/ci/cpu-time.sh LABEL CMD...: runs CMD in a cgroup of its own and prints the CPU seconds of its whole process
# tree (orphans included, which time(1) misses: esbuild, gateways a test left) and the wall time. Linux, cgroup v1
# cpuacct, root. How issue 35 measured where npm test's CPU goes: scripts/ci/cpu-time.sh x npx tap test/a.test.ts
label=$1; shift
cg=/sys/fs/cgroup/cpuacct/cpu-time-$$-$RANDOM
mkdir "$cg"
start=$(date +%s.%N)
bash -c 'echo $$ > '"$cg"'/cgroup.procs; exec "$@"' _ "$@"
rc=$?
end=$(date +%s.%N)
# wait for stragglers in the group to finish
for i in $(seq 1 50); do [ -z "$(cat $cg/cgroup.procs)" ] && break; sleep 0.2; done
cpu=$(cat $cg/cpuacct.usage)
echo "cpu-time $label: cpu=$(echo "scale=2; $cpu/1000000000" | bc) s wall=$(echo "$end - $start" | bc | cut -c1-7) s rc=$rc" >&2
rmdir "$cg" 2>/dev/null || echo "cpu-time $label: processes left in $cg: $(cat $cg/cgroup.procs | tr '\n' ' ')" >&2
exit $rc
