// SPDX-License-Identifier: MIT
// Raw kernel workloads: matmul, elementwise and reductions on RawTensors,
// results new tensors as a user gets them; each with its Eigen and BLAS peers
// (PyTorch's rows come from bench/peers_torch.py, matched by name).
#include "bench/bench.hpp"
#include "bench/peers.hpp"

namespace bench {
namespace {

namespace raw = strata::raw;

const Register kRaw(10, [](std::vector<Workload>& w) {
  for (const int64_t n : {256, 1024, 2048}) {
    for (const bool bt : {false, true}) {
      Workload m{std::string(bt ? "matmul_f32_bt_n" : "matmul_f32_n") + std::to_string(n),
                 [=] {
                   auto a = raw::normal({n, n}, 1, st::f32);
                   auto b = raw::normal({n, n}, 2, st::f32);
                   if (bt) b = b.transpose(0, 1);  // a view: the GEMM reads it in place
                   return [=] { g_sink = raw::matmul(a, b); };
                 },
                 2.0 * n * n * n};
      m.peers.push_back(eigen_matmul(n, bt));
      for (auto& p : blas_peers(n, bt)) m.peers.push_back(p);
      w.push_back(m);
    }
  }
  const int64_t big = 4096;
  const double mat = 4.0 * big * big;  // bytes of one f32 matrix
  for (const bool t : {false, true}) {
    Workload e{std::string("exp_f32_4096x4096") + (t ? "_t" : ""), [=] {
                 auto x = raw::normal({big, big}, 3, st::f32);
                 if (t) x = x.transpose(0, 1);
                 return [=] { g_sink = raw::unary(st::UnaryOp::exp, x); };
               }};
    e.bytes = 2 * mat;
    e.peers.push_back(eigen_exp(big, t));
    if (t) {
      // The target is a ratio to the contiguous exp: timed in the same rounds.
      e.peers.push_back({"contiguous", [=] {
                           auto x = raw::normal({big, big}, 3, st::f32);
                           return Body([=] { g_sink = raw::unary(st::UnaryOp::exp, x); });
                         }});
      e.relative_to = {"contiguous"};
    }
    w.push_back(e);
  }
  for (const bool t : {false, true}) {
    Workload a{std::string("add_f32_4096x4096") + (t ? "_t" : ""), [=] {
                 auto x = raw::normal({big, big}, 4, st::f32);
                 if (t) x = x.transpose(0, 1);
                 auto y = raw::normal({big, big}, 5, st::f32);
                 return [=] { g_sink = raw::binary(st::BinaryOp::add, x, y); };
               }};
    a.bytes = 3 * mat;
    a.peers.push_back(eigen_add(big, t));
    if (t) {
      a.peers.push_back({"contiguous", [=] {
                           auto x = raw::normal({big, big}, 4, st::f32);
                           auto y = raw::normal({big, big}, 5, st::f32);
                           return Body([=] { g_sink = raw::binary(st::BinaryOp::add, x, y); });
                         }});
      a.relative_to = {"contiguous"};
    }
    w.push_back(a);
  }
  const std::pair<const char*, int> sums[] = {{"sum_axis1", 1}, {"sum_axis0", 0}, {"sum_all", -1}};
  for (const auto& [name, axis] : sums) {
    Workload s{std::string(name) + "_f32_4096x4096", [axis = axis, big] {
                 auto x = raw::normal({big, big}, 6, st::f32);
                 const st::Shape axes = axis < 0 ? st::Shape{0, 1} : st::Shape{axis};
                 return [=] { g_sink = raw::reduce(st::ReduceOp::sum, x, axes); };
               }};
    s.bytes = mat;  // bytes read; the result is 16 KiB at most
    s.peers.push_back(eigen_sum(big, axis));
    w.push_back(s);
  }
});

}  // namespace
}  // namespace bench
