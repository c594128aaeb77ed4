// SPDX-License-Identifier: MIT
// Device parity of the factorisations (raw/linalg.hpp): every CUDA device
// against the CPU backend on the same matrices, in batches that take
// cuSOLVER's batched routines (n <= 32) and its loops (one large matrix), on
// contiguous and transposed inputs. Results unique up to signs (eigenvectors,
// singular vectors, Q and R) are compared through what is unique: the
// products and the absolute values. A failure gives the same LinAlgError on
// both devices.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "support/cuda_parity.hpp"
#include "support/naive.hpp"

namespace st = strata;
namespace raw = strata::raw;
using st::testing::cuda_devices;

namespace {

std::vector<double> on_host(const st::RawTensor& t) {
  return st::testing::values(raw::to_device(t, st::Device::cpu()));
}

/// The largest |a - b| over |b|'s largest element, for tensors of one shape.
double rel_diff(const st::RawTensor& a, const st::RawTensor& b, bool absolute = false) {
  REQUIRE(a.shape() == b.shape());
  const std::vector<double> x = on_host(a), y = on_host(b);
  double diff = 0, scale = 1;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double p = absolute ? std::abs(x[i]) : x[i], q = absolute ? std::abs(y[i]) : y[i];
    diff = std::max(diff, std::abs(p - q));
    scale = std::max(scale, std::abs(q));
  }
  return diff / scale;
}

double tol(st::DType t) { return t == st::f32 ? 2e-3 : 1e-9; }

/// G G^T / n + n I on the CPU: symmetric positive-definite, well-conditioned.
st::RawTensor spd(const st::Shape& shape, st::DType t, uint64_t seed) {
  const int64_t n = shape[shape.ndim() - 1];
  const st::RawTensor g = raw::normal(shape, seed, t, st::Device::cpu());
  st::RawTensor a = raw::matmul(g, g.transpose(-1, -2));
  std::vector<double> v = st::testing::values(a);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const int64_t r = int64_t(i) / n % n, c = int64_t(i) % n;
    v[i] = v[i] / double(n) + (r == c ? 1.0 : 0.0);
  }
  if (t == st::f32) {
    std::vector<float> f(v.begin(), v.end());
    return raw::from_host(f.data(), shape, t, st::Device::cpu());
  }
  return raw::from_host(v.data(), shape, t, st::Device::cpu());
}

st::RawTensor mm(const st::RawTensor& a, const st::RawTensor& b) { return raw::matmul(a, b); }

/// The same storage bytes and layout as the CPU tensor t, on device d.
st::RawTensor same_layout_on(const st::RawTensor& t, st::Device d) {
  const std::size_t es = st::dtype_size(t.dtype());
  const int64_t n = int64_t(t.storage()->bytes() / es);
  const st::RawTensor flat = raw::from_host(t.storage()->data(), {n}, t.dtype(), d);
  return st::RawTensor(flat.storage(), t.layout(), t.dtype());
}

}  // namespace

TEST_CASE("cuda: factorisations agree with the CPU", "[cuda][linalg]") {
  const std::vector<st::Shape> shapes = {{8, 6, 6}, {1, 40, 40}, {2, 33, 33}, {70, 70}};
  for (const st::Device d : cuda_devices()) {
    for (st::DType t : {st::f64, st::f32}) {
      for (const st::Shape& shape : shapes) {
        INFO(st::to_string(d) << " " << st::dtype_name(t) << " " << shape);
        const int64_t nd = shape.ndim();
        const st::RawTensor a = spd(shape, t, 3);
        // The same matrices row-major and column-major (a is symmetric), on both devices.
        for (const st::RawTensor& in :
             {a, raw::contiguous(a.transpose(-1, -2)).transpose(-1, -2)}) {
          const st::RawTensor on_dev = same_layout_on(in, d);
          // cholesky: unique.
          CHECK(rel_diff(raw::cholesky(on_dev), raw::cholesky(in)) <= tol(t));
          // lu: the same pivots on these well-separated matrices.
          const auto lc = raw::lu(in);
          const auto lg = raw::lu(on_dev);
          CHECK(rel_diff(lg[0], lc[0]) <= tol(t));
          CHECK(on_host(lg[1]) == on_host(lc[1]));
          CHECK(on_host(lg[2]) == on_host(lc[2]));
          // lu_inverse from those factors, read through a transposed view on the device.
          const st::RawTensor factors_t = raw::contiguous(lg[0].transpose(-1, -2));
          CHECK(rel_diff(raw::lu_inverse(factors_t.transpose(-1, -2), lg[2]),
                         raw::lu_inverse(lc[0], lc[2])) <= tol(t));
          // eigh: values; vectors through V diag(w) V^T = A.
          const auto ec = raw::eigh(in);
          const auto eg = raw::eigh(on_dev);
          CHECK(rel_diff(eg[0], ec[0]) <= tol(t));
          const st::RawTensor vw =
              raw::binary(st::BinaryOp::mul, eg[1], eg[0].unsqueeze(nd - 2).expand(eg[1].shape()));
          CHECK(rel_diff(raw::to_device(mm(vw, eg[1].transpose(-1, -2)), st::Device::cpu()),
                         raw::contiguous(in)) <= tol(t));
          // svd of a wide slice: values, and U diag(S) Vh = A.
          const st::RawTensor wide = in.slice(nd - 2, 0, shape[nd - 2] / 2);
          const auto sc = raw::svd(wide);
          const auto sg = raw::svd(raw::to_device(raw::contiguous(wide), d));
          CHECK(rel_diff(sg[1], sc[1]) <= tol(t));
          const st::RawTensor us =
              raw::binary(st::BinaryOp::mul, sg[0], sg[1].unsqueeze(nd - 2).expand(sg[0].shape()));
          CHECK(rel_diff(raw::to_device(mm(us, sg[2]), st::Device::cpu()), raw::contiguous(wide)) <=
                tol(t));
          // qr of a tall slice: Q R = A and |R| as the CPU's.
          const st::RawTensor tall = in.slice(nd - 1, 0, shape[nd - 1] / 2 + 1);
          const auto qc = raw::qr(tall);
          const auto qg = raw::qr(raw::to_device(raw::contiguous(tall), d));
          CHECK(rel_diff(qg[1], qc[1], true) <= tol(t));
          CHECK(rel_diff(raw::to_device(mm(qg[0], qg[1]), st::Device::cpu()),
                         raw::contiguous(tall)) <= tol(t));
          // triangular_solve, every option, against the CPU's.
          const st::RawTensor l = raw::cholesky(in);
          st::Shape bshape(shape.begin(), shape.end() - 1);
          bshape.push_back(3);
          const st::RawTensor b = raw::normal(bshape, 9, t, st::Device::cpu());
          for (int bits = 0; bits < 16; ++bits) {
            const st::raw::TriangularSolve o{(bits & 1) != 0, (bits & 2) != 0, (bits & 4) != 0,
                                             (bits & 8) != 0};
            // l's transpose (a column-major view) is upper: the triangle the options read.
            const st::RawTensor m = o.lower ? l : l.transpose(-1, -2);
            const st::RawTensor rhs = o.left ? b : b.transpose(-1, -2);
            const st::RawTensor want = raw::triangular_solve(m, rhs, o);
            const st::RawTensor got =
                raw::triangular_solve(same_layout_on(m, d), same_layout_on(rhs, d), o);
            INFO("options " << bits);
            CHECK(rel_diff(got, want) <= tol(t));
          }
        }
      }
    }
  }
}

TEST_CASE("cuda: factorisation errors are the CPU's", "[cuda][linalg]") {
  for (const st::Device d : cuda_devices()) {
    for (int64_t n : {3, 40}) {
      // Element 1 of 2 has a negative pivot at order 2.
      std::vector<double> v(static_cast<std::size_t>(2 * n * n), 0.0);
      for (int64_t b = 0; b < 2; ++b) {
        for (int64_t i = 0; i < n; ++i) v[std::size_t(b * n * n + i * n + i)] = 1.0;
      }
      v[std::size_t(n * n + n + 1)] = -4.0;
      const st::RawTensor cpu = raw::from_host(v.data(), {2, n, n}, st::f64, st::Device::cpu());
      std::string want, got;
      try {
        raw::cholesky(cpu);
      } catch (const st::LinAlgError& e) {
        want = e.what();
      }
      try {
        raw::cholesky(raw::to_device(cpu, d));
      } catch (const st::LinAlgError& e) {
        got = e.what();
      }
      CHECK(want ==
            "cholesky: input[1] is not positive-definite: the leading minor of order 2 "
            "is not positive");
      CHECK(got == want);
      v[2] = std::nan("");
      const st::RawTensor bad = raw::from_host(v.data(), {2, n, n}, st::f64, d);
      CHECK_THROWS_WITH(raw::lu(bad), "lu: input[0] holds a NaN or an infinity");
      const auto eye_lu = raw::lu(raw::to_device(cpu, d));
      CHECK_THROWS_WITH(raw::lu_inverse(bad, eye_lu[2]),
                        "lu_inverse: lu[0] holds a NaN or an infinity");
      std::vector<int64_t> dup(static_cast<std::size_t>(2 * n), 0);
      const st::RawTensor bad_perm = raw::from_host(dup.data(), {2, n}, st::i64, d);
      CHECK_THROWS_WITH(raw::lu_inverse(eye_lu[0], bad_perm),
                        "lu_inverse: perm[0] is not a permutation of 0.." + std::to_string(n - 1));
      std::vector<double> zero(v.begin(), v.end());
      zero[2] = 0.0;
      zero[std::size_t(n * n + n * n - 1)] = 0.0;  // U[1]'s last diagonal element
      CHECK_THROWS_WITH(
          raw::lu_inverse(raw::from_host(zero.data(), {2, n, n}, st::f64, d), eye_lu[2]),
          "lu_inverse: lu[1] is singular: U's diagonal element " + std::to_string(n - 1) +
              " is zero");
      CHECK_THROWS_WITH(raw::svd(bad), "svd: input[0] holds a NaN or an infinity");
      CHECK_THROWS_WITH(raw::triangular_solve(bad, bad, {.lower = false}),
                        Catch::Matchers::Contains("triangular_solve: input[0] holds a NaN"));
    }
  }
}
