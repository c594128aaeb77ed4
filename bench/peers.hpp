// SPDX-License-Identifier: MIT
// Peers for the raw workloads (Eigen, OpenBLAS, BLIS) and the machine's
// limits, all timed in the same strata_bench run.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/bench.hpp"

namespace bench {

/// n floats from a fixed normal distribution, shared by the peers' bodies.
std::shared_ptr<std::vector<float>> host_normal(int64_t n, uint64_t seed);

/// Eigen (-march=native, 2 threads, results in new matrices).
Peer eigen_matmul(int64_t n, bool bt);
Peer eigen_exp(int64_t n, bool transposed);
Peer eigen_add(int64_t n, bool transposed);
Peer eigen_sum(int64_t n, int axis);  // axis 0, 1, or -1 for all
/// OpenBLAS and BLIS sgemm (2 threads each, AVX-512 kernels where the CPU has them).
std::vector<Peer> blas_peers(int64_t n, bool bt);

/// What the machine can do, measured in the run (bench/limits.cpp).
struct Limits {
  double copy_gbps = 0;   ///< STREAM copy, 2 threads, bytes read + written
  double triad_gbps = 0;  ///< STREAM triad a = b + s * c, 2 threads
  double fma_gflops = 0;  ///< f32 FMA peak, 2 threads
  const char* fma_isa = "";
  /// The bandwidth a workload's bytes are held against: the better of copy and triad.
  double bandwidth_gbps() const { return copy_gbps > triad_gbps ? copy_gbps : triad_gbps; }
};
Limits measure_limits(int threads);

}  // namespace bench
