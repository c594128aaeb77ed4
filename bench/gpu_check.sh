#!/usr/bin/env bash
# The GPU check, in one call on a bare GPU image with no network: configures
# strata with the CUDA backend against the private prefix of bench/gpu_deps.sh
# only (cmake/gpu_deps.toolchain.cmake), builds with ninja, runs the whole
# ctest suite (the CUDA parity suite must run, not skip), compute-sanitizer's
# memcheck and racecheck on the CUDA parity suite, and the cuda_* benchmark
# rows with their cuBLAS, device-copy and PyTorch (CUDA) peers. Logs and a
# results JSON go to $OUT. Each step has a time limit, and the whole run stays
# within GPU_CHECK_BUDGET_S; gpu_check.json is written whatever happens.
#
#   bench/gpu_deps.sh              # beforehand, on a machine with network
#   OUT=/some/folder bench/gpu_check.sh
#
# With the device tool (docs/CUDA.md): run(command="bash bench/gpu_check.sh",
# carry=[".gpu-deps"], timeout_s=540) from the checkout that holds .gpu-deps/;
# the tool sets OUT and brings its files back.
#
# Environment:
#   OUT                    results folder (default build/gpu-check)
#   GPU_DEPS_DIR           what gpu_deps.sh filled (default .gpu-deps)
#   GPU_CHECK_BUILD        build folder (default build-gpu; kept, so a rerun is incremental)
#   GPU_CHECK_BUDGET_S     wall-clock budget of the whole run (default 460)
#   GPU_CHECK_JOBS         build and ctest parallelism (default nproc)
#   GPU_CHECK_STEP_SCALE   multiplies every step's time limit (default 1; a dry
#                          run on a 2-core machine needs about 10, and a larger budget)
#   GPU_CHECK_PYTHON       the Python with PyTorch (default: the first python3 that imports torch)
#   GPU_CHECK_BUILD_TARGETS   build only these targets, GPU_CHECK_CTEST_ARGS more
#                          ctest arguments (e.g. -R regex): a shorter dry run on a slow
#                          machine; either one makes the check fail unless it is a dry run
#   GPU_CHECK_ALLOW_NO_GPU=1  dry run on a machine without a GPU: a skipped CUDA
#                          suite, missing compute-sanitizer or a missing CUDA
#                          PyTorch are reported but do not fail the run
#
# Results in $OUT (7 files): gpu_check.json (the summary: environment, each
# step's status and time, ctest counts, sanitizer error counts, the benchmark
# table), build.log, ctest.log, memcheck.log, racecheck.log, bench.log and
# bench.json (strata_bench's JSON). Exit status 0 when every step passed.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
START=$(date +%s)
OUT=${OUT:-build/gpu-check}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
BUILD=${GPU_CHECK_BUILD:-build-gpu}
DEPS=${GPU_DEPS_DIR:-.gpu-deps}
BUDGET=${GPU_CHECK_BUDGET_S:-460}
JOBS=${GPU_CHECK_JOBS:-$(nproc)}
ALLOW_NO_GPU=${GPU_CHECK_ALLOW_NO_GPU:-0}
SCALE=${GPU_CHECK_STEP_SCALE:-1}
mkdir -p "$BUILD"
BUILD=$(cd "$BUILD" && pwd)
DEPS=$(cd "$DEPS" 2>/dev/null && pwd || echo "$ROOT/$DEPS")
PREFIX=$DEPS/prefix
WORK=$BUILD/gpu-check-work # scratch files that do not go back (env, step table)
rm -rf "$WORK" "$OUT"/{gpu_check.json,build.log,ctest.log,memcheck.log,racecheck.log,bench.log,bench.json}
mkdir -p "$WORK"
STEPS=$WORK/steps.tsv
: >"$STEPS"

say() { echo "gpu_check [$(($(date +%s) - START)) s] $*"; }

# Runs one step: run_step NAME CAP_S LOG CMD... with a limit of CAP_S seconds,
# or less when the budget left is smaller (minus 20 s for the summary and KEEP
# seconds kept for the steps after it). Appends "name status rc seconds limit
# log" to the step table; status is passed, failed, timeout or skipped (no time left).
KEEP=0
run_step() {
  local name=$1 cap=$(($2 * SCALE)) log=$3
  shift 3
  local left=$((BUDGET - ($(date +%s) - START) - 20 - KEEP))
  local limit=$((cap < left ? cap : left))
  if [ "$limit" -lt 10 ]; then
    say "$name: skipped, ${left} s of the budget left"
    printf '%s\tskipped\t-\t0\t%s\t%s\n' "$name" "$limit" "$log" >>"$STEPS"
    return 1
  fi
  say "$name (limit ${limit} s, log $(basename "$log"))"
  local t0 rc status
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >>"$log" 2>&1
  rc=$?
  case $rc in
    0) status=passed ;;
    124 | 137) status=timeout ;;
    *) status=failed ;;
  esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$rc" "$(($(date +%s) - t0))" "$limit" "$log" >>"$STEPS"
  say "$name: $status (exit $rc, $(($(date +%s) - t0)) s)"
  return "$rc"
}

# Marks a step in the table without running anything.
note_step() { printf '%s\t%s\t-\t0\t0\t%s\n' "$1" "$2" "${3:-}" >>"$STEPS"; }

finish() {
  local py
  py=$(command -v python3 || true)
  if [ -n "$py" ]; then
    "$py" "$ROOT/bench/gpu_check_summary.py" --work "$WORK" --out "$OUT" --start "$START" \
      --budget "$BUDGET" --allow-no-gpu "$ALLOW_NO_GPU" --prefix "$PREFIX" --build "$BUILD"
    return $?
  fi
  # No Python at all: the step table as JSON, nothing parsed.
  {
    printf '{"ok": false, "note": "python3 missing: step table only", "steps": [\n'
    awk -F'\t' '{printf "%s{\"name\": \"%s\", \"status\": \"%s\", \"rc\": \"%s\", \"seconds\": %s}\n", \
      (NR > 1 ? "," : ""), $1, $2, $3, $4}' "$STEPS"
    printf ']}\n'
  } >"$OUT/gpu_check.json"
  return 1
}
trap 'finish; exit $?' EXIT

# --- environment -------------------------------------------------------------------
NVCC=${CUDACXX:-}
[ -z "$NVCC" ] && [ -x /usr/local/cuda/bin/nvcc ] && NVCC=/usr/local/cuda/bin/nvcc
[ -z "$NVCC" ] && NVCC=$(command -v nvcc || true)
CUDA_ROOT=""
[ -n "$NVCC" ] && CUDA_ROOT=$(dirname "$(dirname "$(readlink -f "$NVCC")")")
SANITIZER=$(command -v compute-sanitizer || true)
for c in "$CUDA_ROOT/bin/compute-sanitizer" "$CUDA_ROOT/compute-sanitizer/compute-sanitizer"; do
  [ -z "$SANITIZER" ] && [ -x "$c" ] && SANITIZER=$c
done
PY=${GPU_CHECK_PYTHON:-}
if [ -z "$PY" ]; then
  for c in $(command -v -a python3 2>/dev/null) /usr/bin/python3 /opt/conda/bin/python3; do
    if [ -x "$c" ] && "$c" -c "import torch" >/dev/null 2>&1; then
      PY=$c
      break
    fi
  done
fi
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -srm), $(nproc) cores"
  echo "os: $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
  if command -v nvidia-smi >/dev/null; then
    echo "gpu: $(nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap --format=csv,noheader 2>&1 | head -4 | tr '\n' ';')"
  else
    echo "gpu: none (no nvidia-smi)"
  fi
  echo "nvcc: ${NVCC:-missing} $([ -n "$NVCC" ] && "$NVCC" --version | tail -2 | head -1)"
  echo "cxx: $(c++ --version 2>&1 | head -1)"
  echo "cmake: $(cmake --version 2>&1 | head -1)"
  echo "ninja: $(ninja --version 2>&1)"
  echo "glibc: $(ldd --version 2>&1 | head -1)"
  echo "compute_sanitizer: ${SANITIZER:-missing}"
  echo "python: ${PY:-no python3 with torch}"
  [ -n "$PY" ] && "$PY" -c "import torch; print('torch:', torch.__version__, 'cuda', torch.version.cuda, 'available' if torch.cuda.is_available() else 'NOT available')" 2>&1 | tail -1
  echo "prefix: $PREFIX"
} >"$WORK/env.txt"
cat "$WORK/env.txt"

if ! nvidia-smi -L >/dev/null 2>&1; then
  if [ "$ALLOW_NO_GPU" = 1 ]; then
    say "no GPU (GPU_CHECK_ALLOW_NO_GPU=1: dry run, the CUDA suite will report itself skipped)"
  else
    say "nvidia-smi finds no GPU: this run cannot pass (GPU_CHECK_ALLOW_NO_GPU=1 for a dry run)"
  fi
fi
if [ ! -e "$PREFIX/usr/include/catch2/catch.hpp" ]; then
  say "no dependency prefix at $PREFIX: run bench/gpu_deps.sh first and carry $(basename "$DEPS")"
  note_step deps missing
  exit 1
fi
note_step deps present

# The prefix's SLEEF is found through the build tree's RUNPATH; these also
# reach what ctest starts: the install test's separate project
# (CMAKE_PREFIX_PATH), the NumPy interop test (STRATA_TEST_PYTHON) and
# strata_bench's PyTorch peer (STRATA_BENCH_PYTHON).
export LD_LIBRARY_PATH=$PREFIX/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CMAKE_PREFIX_PATH=$PREFIX/usr
[ -n "$PY" ] && export STRATA_TEST_PYTHON=$PY STRATA_BENCH_PYTHON=$PY
[ -n "$NVCC" ] && export CUDACXX=$NVCC
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$ROOT} # where ccache exists (not on the GPU image)

# --- configure and build -------------------------------------------------------------
if [ -f "$BUILD/CMakeCache.txt" ] && ! grep -q '^CMAKE_GENERATOR:INTERNAL=Ninja$' "$BUILD/CMakeCache.txt"; then
  say "$BUILD was configured with another generator: starting it afresh"
  find "$BUILD" -mindepth 1 -maxdepth 1 ! -name gpu-check-work -exec rm -rf {} +
fi
CONFIG=(-S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON
  -DSTRATA_BUILD_TESTS=ON -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=ON)
if ! run_step configure 120 "$OUT/build.log" \
  cmake "${CONFIG[@]}" --toolchain "$ROOT/cmake/gpu_deps.toolchain.cmake"; then
  # Rather than lose the run: configure again without the toolchain's
  # restriction (the image has no other copies of these packages), finding
  # the prefix through CMAKE_PREFIX_PATH and SLEEF by its paths. The check
  # still fails, since the configure step did.
  say "configure with the toolchain failed: again without it"
  rm -rf "$BUILD/CMakeCache.txt" "$BUILD/CMakeFiles"
  run_step configure_plain 120 "$OUT/build.log" cmake "${CONFIG[@]}" \
    -DSLEEF_INCLUDE_DIR="$PREFIX/usr/include/x86_64-linux-gnu" \
    -DSLEEF_LIBRARY="$PREFIX/usr/lib/x86_64-linux-gnu/libsleef.so" || exit 1
fi
# Everything, the benchmark programs (left out of `all`) included, unless told otherwise.
read -ra TARGETS <<<"${GPU_CHECK_BUILD_TARGETS:-all strata_benchmarks}"
TARGETS=(--target "${TARGETS[@]}")
run_step build 360 "$OUT/build.log" cmake --build "$BUILD" -j "$JOBS" "${TARGETS[@]}"
built=$?
{
  echo "== dependencies found (CMakeCache.txt)"
  grep -E '^(Eigen3_DIR|Catch2_DIR|nlohmann_json_DIR|SLEEF_INCLUDE_DIR|SLEEF_LIBRARY|DNNL_LIBRARY|CUDAToolkit_BIN_DIR|CUDA_cudart_LIBRARY|CUDA_cublas_LIBRARY|CMAKE_CXX_COMPILER|CMAKE_CUDA_COMPILER|CMAKE_CUDA_ARCHITECTURES):' \
    "$BUILD/CMakeCache.txt"
  echo "== libraries strata_cuda_tests loads (ldd)"
  ldd "$BUILD/tests/strata_cuda_tests" 2>&1 | grep -E 'sleef|dnnl|cublas|cudart|not found' | sed 's/^[[:space:]]*/ldd: /'
} >>"$OUT/build.log" 2>&1
[ "$built" = 0 ] || exit 1

# --- the test suite, and compute-sanitizer beside it -------------------------------------
# ctest (all cores, mostly CPU) and the sanitizers (one process on the GPU)
# run at the same time; the benchmarks run last, alone, with KEEP seconds
# kept for them. makemore reads /usr/share/dict/words: where the image lacks
# it, ctest leaves it out and it runs after ctest with the prefix's copy.
KEEP=120
read -ra CTEST_ARGS <<<"${GPU_CHECK_CTEST_ARGS:-}"
EXCLUDE=()
if [ ! -r /usr/share/dict/words ]; then
  EXCLUDE+=('^example_makemore$')
fi
# Debian's dataset-fashion-mnist (30 MiB) is not carried to the GPU image (gpu_deps.sh): the
# CPU example that reads it is left out there.
if [ ! -r /usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz ]; then
  EXCLUDE+=('^example_fashion_mnist_cnn$')
fi
if [ ${#EXCLUDE[@]} -gt 0 ]; then
  CTEST_ARGS+=(-E "$(IFS='|'; echo "${EXCLUDE[*]}")")
fi
(
  run_step ctest 200 "$OUT/ctest.log" \
    ctest --test-dir "$BUILD" --output-on-failure --no-tests=error -j "$JOBS" --timeout 180 "${CTEST_ARGS[@]}"
  if [ ! -r /usr/share/dict/words ]; then
    run_step example_makemore 60 "$OUT/ctest.log" \
      "$BUILD/examples/makemore" --small --words "$PREFIX/usr/share/dict/words"
  fi
) &
CTEST_PID=$!

# memcheck: out-of-bounds and misaligned device accesses, API errors. racecheck:
# shared-memory hazards; in strata only the reductions' block tree uses shared
# memory, so that test case runs first, then the rest of the suite.
CUDA_TESTS=$BUILD/tests/strata_cuda_tests
REDUCE_CASE='cuda: reductions over every axis set'
if [ -z "$SANITIZER" ]; then
  say "compute-sanitizer not found"
  note_step memcheck missing "$OUT/memcheck.log"
  note_step racecheck missing "$OUT/racecheck.log"
else
  run_step memcheck 150 "$OUT/memcheck.log" \
    "$SANITIZER" --tool memcheck --error-exitcode 99 --print-limit 50 "$CUDA_TESTS"
  run_step racecheck_reduce 60 "$OUT/racecheck.log" \
    "$SANITIZER" --tool racecheck --racecheck-report all --error-exitcode 99 --print-limit 50 \
    "$CUDA_TESTS" "$REDUCE_CASE"
  run_step racecheck_rest 100 "$OUT/racecheck.log" \
    "$SANITIZER" --tool racecheck --racecheck-report all --error-exitcode 99 --print-limit 50 \
    "$CUDA_TESTS" "~$REDUCE_CASE"
fi
wait "$CTEST_PID"

# --- the GPU benchmarks, alone on the machine -------------------------------------------------
KEEP=0
run_step bench 150 "$OUT/bench.log" \
  "$BUILD/bench/strata_bench" --filter cuda_ --no-limits --reps 20 --out "$OUT/bench.json"
exit 0
