// SPDX-License-Identifier: MIT
#pragma once
/// STRATA_HD marks a function that both backends compile: an ordinary inline
/// function for the CPU, and under nvcc also a CUDA device function. The
/// scalar arithmetic (raw/scalar_ops.hpp) and the random streams
/// (core/random.hpp) are written once with it, so the CPU suite checks the
/// very code the GPU runs.
#ifdef __CUDACC__
#define STRATA_HD __host__ __device__
#else
#define STRATA_HD
#endif
