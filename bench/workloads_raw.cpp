// SPDX-License-Identifier: MIT
// Raw kernel workloads: matmul, elementwise and reductions on RawTensors.
#include "bench/bench.hpp"

namespace bench {
namespace {

namespace raw = strata::raw;

const Register kRaw(10, [](std::vector<Workload>& w) {
  const int64_t n = 1024, big = 4096;
  w.push_back({"matmul_f32_n1024",
               [=] {
                 auto a = raw::normal({n, n}, 1, st::f32), b = raw::normal({n, n}, 2, st::f32);
                 return [=] { g_sink = raw::matmul(a, b); };
               },
               2.0 * n * n * n});
  w.push_back({"matmul_f32_bt_n1024",
               [=] {
                 auto a = raw::normal({n, n}, 1, st::f32);
                 auto b = raw::normal({n, n}, 2, st::f32).transpose(0, 1);
                 return [=] { g_sink = raw::matmul(a, b); };
               },
               2.0 * n * n * n});
  w.push_back({"exp_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 3, st::f32);
                 return [=] { g_sink = raw::unary(st::UnaryOp::exp, x); };
               }});
  w.push_back({"exp_f32_4096x4096_t", [=] {
                 auto x = raw::normal({big, big}, 3, st::f32).transpose(0, 1);
                 return [=] { g_sink = raw::unary(st::UnaryOp::exp, x); };
               }});
  w.push_back(
      {"add_f32_4096x4096", [=] {
         auto x = raw::normal({big, big}, 4, st::f32), y = raw::normal({big, big}, 5, st::f32);
         return [=] { g_sink = raw::binary(st::BinaryOp::add, x, y); };
       }});
  w.push_back({"sum_axis1_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 6, st::f32);
                 return [=] { g_sink = raw::reduce(st::ReduceOp::sum, x, {1}); };
               }});
  w.push_back({"sum_axis0_f32_4096x4096", [=] {
                 auto x = raw::normal({big, big}, 6, st::f32);
                 return [=] { g_sink = raw::reduce(st::ReduceOp::sum, x, {0}); };
               }});
});

}  // namespace
}  // namespace bench
