#!/usr/bin/env bash
# The GPU check: on a machine with an NVIDIA GPU, builds strata with the CUDA
# backend, runs the whole test suite (the CUDA parity suite must run, not be
# skipped) and the GPU benchmarks, and prints their table last.
#
#   bench/gpu_check.sh [BUILD_DIR]        (default build-gpu; about 5 minutes)
#
# Needs the Debian packages of `make deps` (the script installs them when it
# can) and the CUDA Toolkit (nvcc, cuBLAS) under /usr/local/cuda or on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build-gpu}
JOBS=$(nproc)

echo "== device"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || {
  echo "gpu_check: nvidia-smi found no GPU" >&2
  exit 1
}

echo "== build ($BUILD, CUDA on)"
make --no-print-directory deps >/dev/null || echo "gpu_check: could not install packages; trying anyway"
cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DSTRATA_CUDA=ON -DSTRATA_BUILD_TESTS=ON \
  -DSTRATA_BUILD_EXAMPLES=ON -DSTRATA_BUILD_BENCH=ON >/dev/null
cmake --build "$BUILD" -j"$JOBS" 2>&1 | grep -E "error|warning" || true
cmake --build "$BUILD" -j"$JOBS" >/dev/null

echo "== tests"
(cd "$BUILD" && ctest --output-on-failure -j"$JOBS" -LE install)
# ctest counts a skipped suite as not failed: demand that the CUDA suite ran.
"$BUILD/tests/strata_cuda_tests" || {
  echo "gpu_check: the CUDA parity suite did not pass" >&2
  exit 1
}

echo "== GPU benchmarks"
"$BUILD/bench/strata_bench" --filter cuda_ --no-torch --no-limits --reps 20 \
  --out "$BUILD/bench/gpu_results.json"
