#!/usr/bin/env bash
# The GPU check on carried binaries, for a short device lease (docs/CUDA.md,
# "The first GPU run"). Building on the GPU machine costs minutes of the
# lease, so the test runners and strata_bench are built on this machine (a
# CUDA build: nvcc is here), stripped, packed with the shared libraries they
# load that a bare GPU image lacks (SLEEF, oneDNN and its OpenCL loader,
# libgomp), and only run there. bench/gpu_check.sh, which builds there, stays
# the whole check.
#
#   bench/gpu_quick.sh pack [BUILD]   here, after make build-bench (BUILD, default: build)
#                                     -> .gpu-bin/bin.tar.xz (git-ignored)
#   OUT=folder bench/gpu_quick.sh run there, from the checkout's root
#
# With the device tool: run(command="bash bench/gpu_quick.sh run",
# carry=[".gpu-bin"], timeout_s=450). run starts the CUDA parity suite and the
# raw, diff, ad and nn suites on cuda:0 all at once, with compute-sanitizer's
# memcheck (the parity suite) and racecheck (its reduction tests) beside them,
# then strata_bench --filter cuda_ with the PyTorch peer alone. It leaves 8
# files in $OUT: summary.txt (the machine, each step's verdict, the bench
# table), cuda.log, raw_cuda.log, diff_cuda.log, ad_cuda.log, nn_cuda.log,
# sanitize.log and bench.json. Exit status 0 when every suite and sanitizer
# passed. Binaries built on Debian 12 ran on the H200 image (Ubuntu 24.04);
# where they cannot load, run says so: use bench/gpu_check.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=.gpu-bin
RUNNERS=(tests/strata_cuda_tests tests/strata_raw_tests tests/strata_diff_tests
  tests/strata_ad_tests tests/strata_nn_tests bench/strata_bench)

pack() {
  local build=${1:-build} stage
  for r in "${RUNNERS[@]}"; do
    [ -x "$build/$r" ] || { echo "gpu_quick: $build/$r is missing: build it first (make build-bench)" >&2; return 1; }
  done
  ldd "$build/tests/strata_cuda_tests" | grep -q libcudart ||
    { echo "gpu_quick: $build was built without the CUDA backend" >&2; return 1; }
  stage=$(mktemp -d)
  mkdir -p "$stage/tests" "$stage/bench" "$stage/lib" "$BIN"
  for r in "${RUNNERS[@]}"; do strip -o "$stage/$r" "$build/$r"; done
  ldd "$build/tests/strata_cuda_tests" "$build/bench/strata_bench" |
    awk '/=> \// && /sleef|dnnl|OpenCL|gomp/ {print $3}' | sort -u |
    while read -r lib; do cp -L "$lib" "$stage/lib/"; done
  # Paths compiled into the binaries (test data, the PyTorch peer's script)
  # name this source tree; run links it to the checkout there.
  sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" >"$stage/source_dir"
  tar -C "$stage" -cf - . | xz -6 -T0 >"$BIN/bin.tar.xz"
  rm -rf "$stage"
  echo "gpu_quick: $BIN/bin.tar.xz, $(du -h "$BIN/bin.tar.xz" | cut -f1) (carry $BIN)"
}

run() {
  local start out summary p failed=0
  start=$(date +%s)
  out=${OUT:-build/gpu-quick}
  mkdir -p "$out"
  summary=$out/summary.txt
  : >"$summary"
  say() { echo "[$(($(date +%s) - start)) s] $*" | tee -a "$summary"; }
  {
    nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader
    uname -srm
    (. /etc/os-release && echo "$PRETTY_NAME")
    ldd --version | head -1
    echo "cores: $(nproc)"
    python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.is_available())'
  } >>"$summary" 2>&1
  p=$(mktemp -d)
  python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])" \
    "$BIN/bin.tar.xz" "$p" || { say "no $BIN/bin.tar.xz: run pack first and carry $BIN"; return 1; }
  local src
  src=$(cat "$p/source_dir")
  [ -n "$src" ] && [ ! -e "$src" ] && mkdir -p "$(dirname "$src")" && ln -s "$ROOT" "$src"
  # The system's libgomp where there is one; the carried copy otherwise.
  ldconfig -p | grep -q 'libgomp.so.1 ' && rm -f "$p/lib/libgomp.so.1"
  local cuda=""
  for d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
    [ -z "$cuda" ] && [ -e "$d/libcublas.so.13" ] && cuda=$d
  done
  export LD_LIBRARY_PATH=$p/lib${cuda:+:$cuda}
  # The PyTorch peer runs under the image's own libraries.
  printf '#!/bin/sh\nunset LD_LIBRARY_PATH\nexec python3 "$@"\n' >"$p/python" && chmod +x "$p/python"
  if ldd "$p/tests/strata_cuda_tests" | grep -q 'not found' || ! "$p/tests/strata_raw_tests" --help >/dev/null 2>>"$summary"; then
    ldd "$p/tests/strata_cuda_tests" >>"$summary" 2>&1
    say "the carried binaries do not load here: use bench/gpu_check.sh (it builds here)"
    return 1
  fi

  suite() { # suite NAME LIMIT CMD...: the log in $out/NAME.log, the verdict in the summary
    local name=$1 limit=$2 t0 rc
    shift 2
    t0=$(date +%s)
    timeout -k 5 "$limit" "$@" 2>&1 | head -c 15000000 >"$out/$name.log"
    rc=${PIPESTATUS[0]}
    say "$name: exit $rc, $(($(date +%s) - t0)) s; $(grep -E '^(All tests passed|test cases:)' "$out/$name.log" | tail -1)"
    return "$rc"
  }
  local san pids=() parts=()
  san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
  suite cuda 200 "$p/tests/strata_cuda_tests" &
  pids+=($!)
  for layer in raw diff ad nn; do
    STRATA_TEST_DEVICE=cuda:0 suite "${layer}_cuda" 240 "$p/tests/strata_${layer}_tests" "~[.]~[cpu_only]" &
    pids+=($!)
  done
  parts+=("$p/memcheck.txt")
  {
    echo "== memcheck: the parity suite"
    timeout -k 5 240 "$san" --tool memcheck --print-limit 30 "$p/tests/strata_cuda_tests" 2>&1 | tail -c 3000000
  } >"$p/memcheck.txt" 2>&1 &
  pids+=($!)
  local i=0
  for c in 'cuda: reductions over every axis set' 'cuda: reductions with few outputs cut R into slices'; do
    i=$((i + 1))
    parts+=("$p/race$i.txt")
    {
      echo "== racecheck: $c"
      timeout -k 5 240 "$san" --tool racecheck --racecheck-report all --print-limit 30 \
        "$p/tests/strata_cuda_tests" "$c" 2>&1 | tail -c 1000000
    } >"$p/race$i.txt" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]:0:5}"; do wait "$pid" || failed=1; done
  wait
  cat "${parts[@]}" >"$out/sanitize.log"
  # A sanitizer passes when it printed its summary with no error or hazard.
  local summaries clean
  summaries=$(grep -c -E '(ERROR|RACECHECK) SUMMARY' "$out/sanitize.log")
  clean=$(grep -c -E 'ERROR SUMMARY: 0 errors|RACECHECK SUMMARY: 0 hazards' "$out/sanitize.log")
  say "sanitizers: $clean of ${#parts[@]} clean ($summaries summaries)"
  [ "$clean" = "${#parts[@]}" ] || failed=1
  {
    echo "== bench"
    STRATA_BENCH_PYTHON=$p/python timeout -k 5 150 "$p/bench/strata_bench" --filter cuda_ \
      --no-limits --reps 20 --out "$out/bench.json" 2>&1
    echo "bench: exit $?"
  } >>"$summary"
  say "done: $([ "$failed" = 0 ] && echo passed || echo FAILED)"
  return "$failed"
}

case ${1:-} in
  pack) pack "${2:-build}" ;;
  run) run ;;
  *)
    echo "usage: bench/gpu_quick.sh pack [BUILD] | run" >&2
    exit 2
    ;;
esac
