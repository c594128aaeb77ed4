// SPDX-License-Identifier: MIT
// Second-order rows of issue 38: slogdet_grad_f64_n1024 (the gradient of log|det| of an SPD
// matrix, against the primal slogdet alone and PyTorch's autograd) and hvp_mlp_f64 (a
// Hessian-vector product of a tanh MLP's loss, forward over reverse, against st::grad of the
// same loss and PyTorch's functorch.jvp(functorch.grad(f))), interleaved; the peers'
// definitions are in bench/peers_torch.py (second_order_workloads): the same shapes and
// functions, drawn from their own generators.
#include <tuple>

#include "bench/bench.hpp"

namespace bench {
namespace {

/// G G^T / n + I, G normal from seed, f64 [n, n].
st::Tensor spd(int64_t n, uint64_t seed) {
  const st::Tensor g = st::randn({n, n}, seed, st::f64);
  return st::matmul(g, g.transpose(0, 1)) / double(n) + st::eye(n, st::f64);
}

/// The loss of a 64-128-1 tanh MLP on 256 examples, f64: mean((tanh(x W1) W2 - y)^2).
struct Mlp {
  st::Tensor x = st::randn({256, 64}, 51, st::f64), y = st::randn({256, 1}, 52, st::f64);
  st::Tensor w1 = st::randn({64, 128}, 53, st::f64) / 8.0,
             w2 = st::randn({128, 1}, 54, st::f64) / 11.0;
  st::Tensor v1 = st::randn({64, 128}, 55, st::f64), v2 = st::randn({128, 1}, 56, st::f64);
  auto loss() const {
    return [x = x, y = y](const auto& p) {
      const auto r = st::matmul(st::tanh(st::matmul(x, std::get<0>(p))), std::get<1>(p)) - y;
      return st::mean(r * r);
    };
  }
};

const Register kSecondOrder(16, [](std::vector<Workload>& w) {
  const int64_t n = 1024;
  auto logabsdet = [](const auto& a) { return st::linalg::slogdet(a).second; };
  Workload slogdet{"slogdet_grad_f64_n1024", [=] {
                     const st::Tensor a = spd(n, 61);
                     return Body([=] { g_sink = st::grad(logabsdet, a).raw(); });
                   }};
  slogdet.peers.push_back({"primal", [=]() -> Body {
                             const st::Tensor a = spd(n, 61);
                             return [=] { g_sink = logabsdet(a).raw(); };
                           }});
  slogdet.relative_to = {"primal"};
  w.push_back(slogdet);

  Workload hvp{"hvp_mlp_f64", [] {
                 const Mlp m;
                 const auto params = std::make_tuple(m.w1, m.w2),
                            dirs = std::make_tuple(m.v1, m.v2);
                 return Body([=] { g_sink = std::get<0>(st::hvp(m.loss(), params, dirs)).raw(); });
               }};
  hvp.peers.push_back({"grad", []() -> Body {
                         const Mlp m;
                         const auto params = std::make_tuple(m.w1, m.w2);
                         return [=] { g_sink = std::get<0>(st::grad(m.loss(), params)).raw(); };
                       }});
  hvp.relative_to = {"grad"};
  w.push_back(hvp);
});

}  // namespace
}  // namespace bench
