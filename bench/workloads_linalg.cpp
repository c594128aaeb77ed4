// SPDX-License-Identifier: MIT
// The factorisations (raw/linalg.hpp): cholesky_f64_n1024, solve_f64_n1024_k64
// (LU, then the two triangular solves, as a composite solve does) and
// eigh_f64_n512, each against OpenBLAS's LAPACK called directly (2 of its
// threads: dpotrf, dgesv, dsyevd, each on a copy of the input, which they
// overwrite), Eigen's decompositions (one thread) and PyTorch's torch.linalg
// (bench/peers_torch.py), interleaved. Inputs: symmetric positive-definite
// G G^T / n + I, or a normal matrix, the same values for strata and the C++
// peers.
#include <functional>
#include <memory>
#include <vector>

#include "bench/bench.hpp"
#include "bench/peers.hpp"

namespace bench {
namespace {

namespace raw = strata::raw;

/// G G^T / n + I, G normal from seed, f64.
st::RawTensor spd_raw(int64_t n, uint64_t seed) {
  const st::RawTensor g = raw::normal({n, n}, seed, st::f64);
  const st::RawTensor gg = raw::matmul(g, g.transpose(0, 1));
  std::vector<double> v(std::size_t(n * n));
  raw::to_host(gg, v.data());
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j)
      v[std::size_t(i * n + j)] = v[std::size_t(i * n + j)] / n + (i == j);
  }
  return raw::from_host(v.data(), {n, n}, st::f64);
}

/// t's elements on the host (row-major), shared by a peer's body.
std::shared_ptr<std::vector<double>> host(const st::RawTensor& t) {
  auto v = std::make_shared<std::vector<double>>(std::size_t(t.numel()));
  raw::to_host(t, v->data());
  return v;
}

/// X = A^-1 B as the composite solve computes it: A[perm] = L U, then L Y = B[perm] and U X = Y.
st::RawTensor lu_solve(const st::RawTensor& a, const st::RawTensor& b) {
  const auto [lu, pivots, perm] = raw::lu(a);
  const st::RawTensor y = raw::triangular_solve(lu, raw::index_select(b, 0, perm),
                                                {.lower = true, .unit_diagonal = true});
  return raw::triangular_solve(lu, y, {.lower = false});
}

/// The direct OpenBLAS call `make` builds (no column when OpenBLAS is missing).
Peer lapack(std::function<Body(const LapackPeer&)> make) {
  return {"lapack", [=]() -> Body {
            const LapackPeer& l = lapack_peer();
            if (!l.dpotrf || !l.dgesv || !l.dsyevd) return nullptr;
            return make(l);
          }};
}

const Register kLinalg(15, [](std::vector<Workload>& w) {
  {
    const int64_t n = 1024;
    Workload c{"cholesky_f64_n1024",
               [=] {
                 const st::RawTensor a = spd_raw(n, 1);
                 return Body([=] { g_sink = raw::cholesky(a); });
               },
               double(n) * n * n / 3};
    c.peers.push_back(lapack([=](const LapackPeer& l) {
      auto a = host(spd_raw(n, 1));
      auto work = std::make_shared<std::vector<double>>(a->size());
      return Body([=] {
        *work = *a;
        const int ni = int(n);
        int info = 0;
        l.dpotrf("L", &ni, work->data(), &ni, &info, 1);
      });
    }));
    c.peers.push_back({"eigen", [=]() -> Body {
                         auto a = host(spd_raw(n, 1));
                         auto f = eigen_lib().cholesky;
                         return [=] { f(a->data(), n); };
                       }});
    w.push_back(c);
  }
  {
    const int64_t n = 1024, k = 64;
    Workload s{"solve_f64_n1024_k64",
               [=] {
                 const st::RawTensor a = raw::normal({n, n}, 2, st::f64);
                 const st::RawTensor b = raw::normal({n, k}, 3, st::f64);
                 return Body([=] { g_sink = lu_solve(a, b); });
               },
               2.0 * n * n * n / 3 + 2.0 * n * n * k};
    s.peers.push_back(lapack([=](const LapackPeer& l) {
      // dgesv is column-major: A^T X' = B' on the row-major buffers gives the same work.
      auto a = host(raw::normal({n, n}, 2, st::f64));
      auto b = host(raw::normal({n, k}, 3, st::f64));
      auto wa = std::make_shared<std::vector<double>>(a->size());
      auto wb = std::make_shared<std::vector<double>>(b->size());
      auto piv = std::make_shared<std::vector<int>>(std::size_t(n));
      return Body([=] {
        *wa = *a;
        *wb = *b;
        const int ni = int(n), ki = int(k);
        int info = 0;
        l.dgesv(&ni, &ki, wa->data(), &ni, piv->data(), wb->data(), &ni, &info);
      });
    }));
    s.peers.push_back({"eigen", [=]() -> Body {
                         auto a = host(raw::normal({n, n}, 2, st::f64));
                         auto b = host(raw::normal({n, k}, 3, st::f64));
                         auto f = eigen_lib().solve;
                         return [=] { f(a->data(), b->data(), n, k); };
                       }});
    w.push_back(s);
  }
  {
    const int64_t n = 512;
    Workload e{"eigh_f64_n512", [=] {
                 const st::RawTensor a = spd_raw(n, 4);
                 return Body([=] {
                   const auto [vals, vecs] = raw::eigh(a);
                   g_sink = vecs;
                 });
               }};
    e.peers.push_back(lapack([=](const LapackPeer& l) {
      auto a = host(spd_raw(n, 4));
      auto work = std::make_shared<std::vector<double>>(a->size());
      auto vals = std::make_shared<std::vector<double>>(std::size_t(n));
      const int ni = int(n), query = -1;
      double lwork_q = 0;
      int liwork = 0, info = 0;
      l.dsyevd("V", "L", &ni, work->data(), &ni, vals->data(), &lwork_q, &query, &liwork, &query,
               &info, 1, 1);
      auto ws = std::make_shared<std::vector<double>>(std::size_t(lwork_q));
      auto iws = std::make_shared<std::vector<int>>(std::size_t(liwork));
      return Body([=] {
        *work = *a;
        const int lw = int(ws->size()), liw = int(iws->size());
        int inf = 0;
        l.dsyevd("V", "L", &ni, work->data(), &ni, vals->data(), ws->data(), &lw, iws->data(), &liw,
                 &inf, 1, 1);
      });
    }));
    e.peers.push_back({"eigen", [=]() -> Body {
                         auto a = host(spd_raw(n, 4));
                         auto f = eigen_lib().eigh;
                         return [=] { f(a->data(), n); };
                       }});
    w.push_back(e);
  }
});

}  // namespace
}  // namespace bench
