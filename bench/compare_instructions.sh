#!/usr/bin/env bash
# Instructions per repetition of strata_bench rows, for two binaries, counted by
# callgrind (valgrind): the same count on a busy or an idle machine, so an old
# and a new build can be compared without timing noise. One thread; the count
# of one repetition is (run with --reps 2) - (run with --reps 1).
#
#   bench/compare_instructions.sh OLD/strata_bench NEW/strata_bench [ROW...]
#
# Rows default to the AD rows issue 12 compares. Valgrind 3.19 does not decode
# AVX-512: the kernels choose AVX2 under it (CPUID says so), but oneDNN's JIT
# may still die with SIGILL on an AVX-512 machine (the mlp rows); such a row
# prints "-". Needs valgrind (Debian: valgrind).
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OLD_STRATA_BENCH NEW_STRATA_BENCH [ROW...]" >&2
  exit 2
fi
old=$1 new=$2
shift 2
rows=("$@")
if [ ${#rows[@]} -eq 0 ]; then
  rows=(ad_overhead_chain_3000ops hessian_f64_n16 hessian_f64_n64 hessian_f64_n256
        jacfwd_f32_n64 jacfwd_f32_n256 jacrev_f32_n64 jacrev_f32_n256 mlp_train_step_b128)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Instructions of `bin --filter row --reps r`, or empty when the run failed.
# strata alone with one warm-up call (--no-peers --warmup-calls 1: a fixed
# amount of work); binaries older than those flags run as they did.
count() {
  local flags=(--no-peers --warmup-calls 1)
  "$1" --no-peers --warmup-calls 1 --filter no_such_row --no-limits --out "$tmp/probe.json" \
    > /dev/null 2>&1 || flags=(--no-torch)
  OMP_WAIT_POLICY=PASSIVE valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$1" --filter "$2" --reps "$3" --threads 1 "${flags[@]}" --no-limits --out "$tmp/out.json" \
    > /dev/null 2> "$tmp/err" || true
  grep -o "Collected : [0-9]*" "$tmp/err" | grep -o "[0-9]*" || true
}

printf "%-28s %14s %14s %8s\n" row old new new/old
for row in "${rows[@]}"; do
  per=()
  for bin in "$old" "$new"; do
    one=$(count "$bin" "$row" 1) two=$(count "$bin" "$row" 2)
    if [ -n "$one" ] && [ -n "$two" ]; then per+=($((two - one))); else per+=(-); fi
  done
  if [ "${per[0]}" != - ] && [ "${per[1]}" != - ]; then
    awk -v r="$row" -v a="${per[0]}" -v b="${per[1]}" \
      'BEGIN { printf "%-28s %14d %14d %8.3f\n", r, a, b, b / a }'
  else
    printf "%-28s %14s %14s %8s\n" "$row" "${per[0]}" "${per[1]}" -
  fi
done
