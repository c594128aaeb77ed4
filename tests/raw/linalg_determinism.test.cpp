// SPDX-License-Identifier: MIT
// The determinism promise (DESIGN §8) for the factorisations: the same bits at
// 1, 2, 3 and 4 threads. The sizes reach the CPU's parallel paths: the
// blocked Cholesky and LU (n >= 256, raw/cpu/linalg_factor.cpp), the tiled
// triangular solve (n >= 128), and batches of small matrices spread over the
// pool (every op).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "support/linalg_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using st::DType;
using st::RawTensor;
using st::Shape;
using tt::bits;

namespace {

/// Runs f at 1 thread, then at 2, 3 and 4: every output must have the same bits.
void every_output_same_bits_for_any_thread_count(const std::string& what,
                                                 const std::function<std::vector<RawTensor>()>& f) {
  tt::ThreadCountGuard guard;
  st::set_num_threads(1);
  std::vector<std::vector<unsigned char>> want;
  for (const RawTensor& t : f()) want.push_back(bits(t));
  for (int threads : {2, 3, 4}) {
    st::set_num_threads(threads);
    const std::vector<RawTensor> got = f();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO(what << ", output " << i << ", at " << threads << " threads");
      CHECK(bits(got[i]) == want[i]);
    }
  }
}

/// G G^T / n + I for a fixed random G.
RawTensor spd(const Shape& shape, DType dtype, uint64_t seed) {
  const int64_t n = shape[shape.ndim() - 1];
  const RawTensor g = st::raw::normal(shape, seed, dtype);
  const RawTensor gg = st::raw::matmul(g, g.transpose(-1, -2));
  const RawTensor eye = st::raw::cast(
      st::raw::binary(st::BinaryOp::eq,
                      st::raw::arange(0, double(n), 1, DType::i64).unsqueeze(1).expand({n, n}),
                      st::raw::arange(0, double(n), 1, DType::i64).unsqueeze(0).expand({n, n})),
      dtype);
  const RawTensor scaled =
      st::raw::binary(st::BinaryOp::mul, gg, st::raw::full(gg.shape(), 1.0 / double(n), dtype));
  return st::raw::binary(st::BinaryOp::add, scaled, st::raw::contiguous(eye.expand(gg.shape())));
}

}  // namespace

TEST_CASE("linalg: the same bits for any thread count", "[raw][linalg][cpu_only][threads]") {
  for (DType dtype : {DType::f64, DType::f32}) {
    const std::string dt = tt::dname(dtype);
    const RawTensor big = spd({512, 512}, dtype, 1);
    every_output_same_bits_for_any_thread_count(
        "cholesky n=512 " + dt, [&] { return std::vector<RawTensor>{st::raw::cholesky(big)}; });
    const RawTensor general = st::raw::normal({512, 512}, 2, dtype);
    every_output_same_bits_for_any_thread_count("lu n=512 " + dt, [&] {
      const auto [f, p, q] = st::raw::lu(general);
      return std::vector<RawTensor>{f, p, q};
    });
    every_output_same_bits_for_any_thread_count("lu_inverse n=512 " + dt, [&] {
      const auto [f, p, q] = st::raw::lu(general);
      return std::vector<RawTensor>{st::raw::lu_inverse(f, q)};
    });
    const RawTensor l = st::raw::cholesky(spd({256, 256}, dtype, 3));
    const RawTensor rhs = st::raw::normal({256, 96}, 4, dtype);
    every_output_same_bits_for_any_thread_count("triangular_solve n=256 k=96 " + dt, [&] {
      return std::vector<RawTensor>{
          st::raw::triangular_solve(l, rhs, {}),
          st::raw::triangular_solve(l, rhs.transpose(0, 1), {.left = false, .transpose = true})};
    });
    const RawTensor small = spd({64, 12, 12}, dtype, 5);
    every_output_same_bits_for_any_thread_count("a batch of 64 12 x 12 " + dt, [&] {
      const auto [f, p, q] = st::raw::lu(small);
      const auto [w, v] = st::raw::eigh(small);
      const auto [u, s, vh] = st::raw::svd(small);
      const auto [qq, r] = st::raw::qr(small);
      return std::vector<RawTensor>{
          st::raw::cholesky(small), f, p, q, st::raw::lu_inverse(f, q), w, v, u, s, vh, qq, r};
    });
  }
}
