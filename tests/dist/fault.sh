#!/usr/bin/env bash
# A killed rank and a hung rank must give every other rank a DistError within the
# timeout, never a hang (tests/dist/fault.cpp). Runs mpirun under an outer timeout and
# checks each survivor's report: the collective, its rank, the timeout, and the time it
# took. OpenMPI's runtime ends a job as soon as one rank dies unless recovery is on, so
# the killed-rank case runs with orte_enable_recovery (what other launchers do by default).
#   fault.sh MPIEXEC PROGRAM kill|hang NP
set -uo pipefail
mpiexec=$1 program=$2 mode=$3 np=$4
timeout_ms=1500
export OMPI_MCA_orte_enable_recovery=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_hwloc_base_binding_policy=none STRATA_NUM_THREADS=1
start=$SECONDS
out=$(timeout -k 5 60 "$mpiexec" -np "$np" "$program" "$mode" "$timeout_ms" 2>&1)
status=$?
took=$((SECONDS - start))
echo "$out"
echo "fault.sh: mpirun exited with $status after $took s"
fail() { echo "fault.sh: FAILED: $*"; exit 1; }
[ "$status" -ne 124 ] && [ "$status" -ne 137 ] || fail "mpirun hung (killed by the outer timeout)"
[ "$took" -le 30 ] || fail "the job took $took s"
victim=$((np - 1))
for ((r = 0; r < victim; ++r)); do
  line=$(grep -E "^rank $r: DistError after " <<<"$out") || fail "rank $r reported no DistError"
  grep -qF "st::dist::all_reduce(sum) of f32[3, 4] on rank $r of $np: not complete after 1.5 s (the timeout" \
    <<<"$line" || fail "rank $r's message does not name the collective, the rank and the timeout"
  secs=$(sed -E 's/^rank [0-9]+: DistError after ([0-9.]+) s.*/\1/' <<<"$line")
  awk -v s="$secs" 'BEGIN { exit !(s >= 1.4 && s < 4.5) }' || fail "rank $r waited $secs s"
  grep -qE "^rank $r: then: .*barrier on rank $r: the process group failed earlier" <<<"$out" ||
    fail "rank $r's next collective did not fail at once"
done
echo "fault.sh: every survivor of the $mode raised DistError within the timeout"
