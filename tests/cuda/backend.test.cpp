// SPDX-License-Identifier: MIT
// The CUDA backend's lifetime (raw/cuda/backend.cu): a device tensor held in
// static storage outlives main, and freeing it at exit must find its device's
// allocator alive. The first GPU run ended in a double free this way (a bench
// row's result kept in a global). This test's failure is the runner's exit
// status (a crash after main), which ctest reports.
#include <catch2/catch.hpp>

#include <vector>

#include "raw/backend.hpp"
#include "raw/ops.hpp"

namespace st = strata;
namespace raw = strata::raw;

namespace {

// Constructed before any CUDA backend exists, so destroyed after any
// function-local static the backend might have used.
std::vector<st::RawTensor> g_outlive_main;

}  // namespace

TEST_CASE("cuda: device tensors in static storage are freed after main", "[cuda]") {
  for (int i = 0; i < st::cuda_device_count(); ++i) {
    const st::Device d = st::Device::cuda(i);
    const st::RawTensor t = raw::full({1 << 20}, 1.5, st::f32, d);
    g_outlive_main.push_back(t);
    g_outlive_main.push_back(raw::binary(st::BinaryOp::add, t, t));
    double back = 0;
    raw::to_host(raw::reduce(st::ReduceOp::sum, raw::cast(t.slice(0, 0, 4), st::f64), {0}), &back);
    CHECK(back == 6.0);
  }
  CHECK(g_outlive_main.size() == std::size_t(2 * st::cuda_device_count()));
}
