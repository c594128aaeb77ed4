// SPDX-License-Identifier: MIT
// Peers for the raw workloads (Eigen, OpenBLAS, BLIS) and the machine's
// limits, all timed in the same strata_bench run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bench/bench.hpp"

namespace bench {

/// The instruction set strata's kernels use in this process (vmath::best():
/// "avx512", "avx2", "sse2", or "scalar" off x86-64); STRATA_ISA caps it.
std::string isa_in_use();
/// The CPU's model name, family and model number from /proc/cpuinfo.
std::string cpu_model();

/// n floats from a fixed normal distribution, shared by the peers' bodies.
std::shared_ptr<std::vector<float>> host_normal(int64_t n, uint64_t seed);

/// The Eigen peer (bench/peers_eigen.cpp), built twice: -march=native and
/// -march=haswell (AVX2). The one matching isa_in_use() is loaded at run time
/// (dlopen), so an AVX2 run measures Eigen's AVX2 code too.
struct EigenLib {
  std::string path;   ///< the library loaded
  std::string error;  ///< why none was loaded (its functions are then null)
  void (*sgemm)(const float* a, const float* b, int64_t n, int bt) = nullptr;
  void (*exp)(const float* x, int64_t rows, int64_t cols, int xt) = nullptr;
  void (*add)(const float* x, const float* y, int64_t rows, int64_t cols, int xt) = nullptr;
  void (*sum)(const float* x, int64_t rows, int64_t cols, int axis) = nullptr;
  void* (*mlp_new)(const float* w1, const float* w2, const float* w3, const float* x,
                   const int64_t* y, int64_t batch, int64_t in, int64_t hidden, int64_t classes,
                   float lr) = nullptr;
  void (*mlp_free)(void* net) = nullptr;
  void (*mlp_step)(void* net) = nullptr;
  void (*hessian_tanh)(const double* w, const double* x, int64_t n, double* h) = nullptr;
  void (*cholesky)(const double* a, int64_t n) = nullptr;
  void (*solve)(const double* a, const double* b, int64_t n, int64_t k) = nullptr;
  void (*eigh)(const double* a, int64_t n) = nullptr;
};
/// The Eigen library for this run's instruction set, loaded on first use.
const EigenLib& eigen_lib();

/// Eigen (2 threads, results in new matrices).
Peer eigen_matmul(int64_t n, bool bt);
Peer eigen_exp(int64_t n, bool transposed);
Peer eigen_add(int64_t n, bool transposed);
Peer eigen_sum(int64_t n, int axis);  // axis 0, 1, or -1 for all
/// OpenBLAS and BLIS sgemm (2 threads each, AVX-512 kernels where the CPU has them).
std::vector<Peer> blas_peers(int64_t n, bool bt);
/// Loads both BLAS libraries now (each prints its configuration once).
void load_blas_peers();

/// OpenBLAS's LAPACK as a program calls it directly (Fortran interface, 2 of its threads), from
/// the same library instance as the openblas sgemm peer: loaded into its own link-map
/// namespace (dlmopen), so that its thread count never touches the instance strata's CPU
/// factorisations load (raw/cpu/lapack.hpp). Null functions when it is not installed.
struct LapackPeer {
  void (*dpotrf)(const char*, const int*, double*, const int*, int*, std::size_t) = nullptr;
  void (*dgesv)(const int*, const int*, double*, const int*, int*, double*, const int*,
                int*) = nullptr;
  void (*dsyevd)(const char*, const char*, const int*, double*, const int*, double*, double*,
                 const int*, int*, const int*, int*, std::size_t, std::size_t) = nullptr;
};
const LapackPeer& lapack_peer();

/// What the machine can do, measured in the run (bench/limits.cpp).
struct Limits {
  double copy_gbps = 0;   ///< STREAM copy, 2 threads, bytes read + written
  double triad_gbps = 0;  ///< STREAM triad a = b + s * c, 2 threads
  double fma_gflops = 0;  ///< f32 FMA peak, 2 threads, with the instruction set in use
  const char* fma_isa = "";
  /// The bandwidth a workload's bytes are held against: the better of copy and triad.
  double bandwidth_gbps() const { return copy_gbps > triad_gbps ? copy_gbps : triad_gbps; }
};
/// Measures the limits; the FMA peak with the widest vectors `isa` allows.
Limits measure_limits(int threads, const std::string& isa);

}  // namespace bench
