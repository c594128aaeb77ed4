// SPDX-License-Identifier: MIT
// Indexing workloads: a gather of 10^5 random rows (with repeats) out of a
// [10^6, 64] f32 table, forward alone and forward + backward (whose backward
// pass is a scatter-add into a zero gradient the size of the table).
// Peers: a plain copy of the gathered bytes (the bandwidth mark for the
// forward) and hand-written C++ loops doing the same work.
#include <cstring>
#include <random>
#include <vector>

#include "bench/bench.hpp"

namespace bench {
namespace {

constexpr int64_t kRows = 1000000, kCols = 64, kPicks = 100000;

std::vector<int64_t> random_rows() {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> pick(0, kRows - 1);
  std::vector<int64_t> idx(kPicks);
  for (int64_t& i : idx) i = pick(rng);  // 10^5 draws of 10^6 rows: some repeat
  return idx;
}

const Register kIndex(30, [](std::vector<Workload>& w) {
  // bytes: the gathered rows read, the result written, the indices read.
  const double gathered = double(kPicks) * kCols * sizeof(float);
  Workload fwd{"gather_fwd_1e6x64_1e5", [] {
                 const st::Tensor x = st::randn({kRows, kCols}, 31, st::f32);
                 const st::Tensor idx = st::from_vector(random_rows());
                 return Body([=] { g_sink = x.vix(idx).raw(); });
               }};
  fwd.bytes = 2 * gathered + kPicks * sizeof(int64_t);
  fwd.peers.push_back({"copy_same_bytes", [] {
                         const st::RawTensor src = st::raw::normal({kPicks, kCols}, 32, st::f32);
                         return Body([=] {
                           // A new tensor, as the gather's result is: allocate, then copy.
                           const st::RawTensor out = st::raw::empty(src.shape(), st::f32);
                           st::raw::copy_(out, src);
                           g_sink = out;
                         });
                       }});
  fwd.relative_to = {"copy_same_bytes"};  // the target is a ratio to it, round by round
  fwd.peers.push_back({"cpp_loop", [] {
                         auto x = std::make_shared<std::vector<float>>(
                             st::randn({kRows, kCols}, 31, st::f32).to_vector<float>());
                         auto idx = std::make_shared<std::vector<int64_t>>(random_rows());
                         auto out = std::make_shared<std::vector<float>>(kPicks * kCols);
                         return Body([=] {
                           for (int64_t j = 0; j < kPicks; ++j) {
                             std::memcpy(out->data() + j * kCols, x->data() + (*idx)[j] * kCols,
                                         kCols * sizeof(float));
                           }
                         });
                       }});
  w.push_back(fwd);

  Workload bwd{"gather_fwdbwd_1e6x64_1e5", [] {
                 const st::Tensor x = st::randn({kRows, kCols}, 31, st::f32);
                 const st::Tensor idx = st::from_vector(random_rows());
                 const st::Tensor r = st::randn({kPicks, kCols}, 33, st::f32);
                 auto f = [=](const auto& x) { return st::sum(x.vix(idx) * r); };
                 return Body([=] { g_sink = st::value_and_grad(f, x).second.raw(); });
               }};
  bwd.peers.push_back({"cpp_loop", [] {
                         auto x = std::make_shared<std::vector<float>>(
                             st::randn({kRows, kCols}, 31, st::f32).to_vector<float>());
                         auto idx = std::make_shared<std::vector<int64_t>>(random_rows());
                         auto r = std::make_shared<std::vector<float>>(
                             st::randn({kPicks, kCols}, 33, st::f32).to_vector<float>());
                         return Body([=] {
                           // Forward: the gathered rows times r, summed.
                           double value = 0;
                           for (int64_t j = 0; j < kPicks; ++j) {
                             const float* row = x->data() + (*idx)[j] * kCols;
                             const float* rr = r->data() + j * kCols;
                             float acc = 0;
                             for (int64_t c = 0; c < kCols; ++c) acc += row[c] * rr[c];
                             value += acc;
                           }
                           // Backward: a fresh zero gradient, r scattered into it.
                           std::vector<float> grad(std::size_t(kRows * kCols), 0.0f);
                           for (int64_t j = 0; j < kPicks; ++j) {
                             float* g = grad.data() + (*idx)[j] * kCols;
                             const float* rr = r->data() + j * kCols;
                             for (int64_t c = 0; c < kCols; ++c) g[c] += rr[c];
                           }
                           g_sink = st::raw::full({1}, value + grad[0], st::f32);
                         });
                       }});
  w.push_back(bwd);
});

}  // namespace
}  // namespace bench
