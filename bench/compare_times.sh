#!/usr/bin/env bash
# Wall-clock medians of strata_bench rows for two binaries, run alternately
# (old, new, old, new, ... ROUNDS times per row, each run 15 repetitions with
# the binary's own warm-up), so that both see the same drift of a shared
# host. Prints each row's median over the rounds of each binary's median and
# their ratio. The instruction counts of bench/compare_instructions.sh do not
# drift at all, but they see AVX2 code only (valgrind) and one thread.
#
#   bench/compare_times.sh OLD/strata_bench NEW/strata_bench ROUNDS ROW...
#
# Needs python3. PyTorch is never started (--no-torch).
set -euo pipefail
if [ $# -lt 4 ]; then
  echo "usage: $0 OLD_STRATA_BENCH NEW_STRATA_BENCH ROUNDS ROW..." >&2
  exit 2
fi
old=$1 new=$2 rounds=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for row in "$@"; do
  for _ in $(seq "$rounds"); do
    for side in old new; do
      bin=$old
      [ "$side" = new ] && bin=$new
      OMP_WAIT_POLICY=PASSIVE "$bin" --filter "$row" --no-torch --no-limits --reps 15 \
        --out "$tmp/$side.json" > /dev/null 2>&1 || { echo "$bin failed on $row" >&2; exit 1; }
      python3 - "$tmp/$side.json" "$row" "$side" >> "$tmp/medians" <<'PY'
import json, sys
path, row, side = sys.argv[1:]
for r in json.load(open(path))["results"]:
    if r["name"] == row:
        print(row, side, r["median"])
PY
    done
  done
done
python3 - "$tmp/medians" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    row, side, ms = line.split()
    runs[(row, side)].append(float(ms))
print(f"{'row':30s} {'old ms':>10s} {'new ms':>10s} {'new/old':>8s}")
for row in dict.fromkeys(k[0] for k in runs):
    o, n = statistics.median(runs[(row, "old")]), statistics.median(runs[(row, "new")])
    print(f"{row:30s} {o:10.4f} {n:10.4f} {n / o:8.3f}")
PY
