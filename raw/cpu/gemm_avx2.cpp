// SPDX-License-Identifier: MIT
// Eigen's GEMM for AVX2 (this file is compiled with -mavx2 -mfma); every symbol
// but kGemm is made local to its object at build time (raw/cpu/eigen_gemm.hpp).
#include "raw/cpu/eigen_gemm.hpp"

namespace strata::detail::gemm_avx2 {

const GemmKernels kGemm{eigen_gemm<float>, eigen_gemm<double>};

}  // namespace strata::detail::gemm_avx2
