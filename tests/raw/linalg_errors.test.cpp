// SPDX-License-Identifier: MIT
// The bad inputs of the factorisations (raw/linalg.hpp), each with the error
// class and message it must give, and nothing printed to stderr meanwhile
// (LAPACK's xerbla prints there when it is called with a bad argument: the
// front end and the kernels must never let it).
#include <catch2/catch.hpp>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include <unistd.h>

#include "support/linalg_ref.hpp"

namespace st = strata;
namespace tt = strata::testing;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using st::DType;
using st::RawTensor;
using st::Shape;
using tt::kInf;
using tt::kNaN;

namespace {

/// What fn writes to file descriptor 2 while it runs.
std::string stderr_of(const std::function<void()>& fn) {
  std::fflush(stderr);
  std::FILE* tmp = std::tmpfile();
  REQUIRE(tmp != nullptr);
  const int saved = dup(2);
  dup2(fileno(tmp), 2);
  try {
    fn();
  } catch (...) {
    std::fflush(stderr);
    dup2(saved, 2);
    close(saved);
    std::fclose(tmp);
    throw;
  }
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string out;
  for (int c; (c = std::fgetc(tmp)) != EOF;) out.push_back(char(c));
  std::fclose(tmp);
  return out;
}

/// n x n identities, `count` of them, as a [count, n, n] tensor (or [n, n] for count < 0).
std::vector<double> identities(int64_t count, int64_t n) {
  std::vector<double> v;
  for (int64_t b = 0; b < std::max<int64_t>(count, 1); ++b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) v.push_back(i == j ? 1.0 : 0.0);
    }
  }
  return v;
}

RawTensor f64(const Shape& shape, const std::vector<double>& v) {
  return tt::make(shape, DType::f64, v);
}

}  // namespace

TEST_CASE("linalg errors: not positive-definite, singular, NaN, each naming the element",
          "[raw][linalg]") {
  STATIC_REQUIRE(std::is_base_of_v<st::Error, st::LinAlgError>);
  const std::string printed = stderr_of([] {
    // cholesky: element 3 of 5 has a non-positive leading minor of order 2.
    std::vector<double> v = identities(5, 3);
    v[std::size_t(3 * 9 + 4)] = -1.0;
    CHECK_THROWS_MATCHES(st::raw::cholesky(f64({5, 3, 3}, v)), st::LinAlgError,
                         Catch::Matchers::Message("cholesky: input[3] is not positive-definite: "
                                                  "the leading minor of order 2 is not positive"));
    // Unbatched, and with two batch dims: a multi-index.
    CHECK_THROWS_MATCHES(st::raw::cholesky(f64({2, 2}, {1, 0, 2, 1})), st::LinAlgError,
                         Catch::Matchers::Message("cholesky: input is not positive-definite: the "
                                                  "leading minor of order 2 is not positive"));
    std::vector<double> w = identities(6, 2);
    w[std::size_t(5 * 4)] = 0.0;
    CHECK_THROWS_WITH(st::raw::cholesky(f64({2, 3, 2, 2}, w)),
                      Contains("cholesky: input[1, 2] is not positive-definite: the leading minor "
                               "of order 1"));
    // A NaN in the lower triangle is an error; in the upper one, which is not read, it is not.
    std::vector<double> nan_lower = identities(2, 3), nan_upper = identities(2, 3);
    nan_lower[std::size_t(9 + 2 * 3 + 1)] = kNaN;
    nan_upper[std::size_t(9 + 1 * 3 + 2)] = kNaN;
    CHECK_THROWS_AS(st::raw::cholesky(f64({2, 3, 3}, nan_lower)), st::LinAlgError);
    CHECK_THROWS_WITH(
        st::raw::cholesky(f64({2, 3, 3}, nan_lower)),
        Catch::Matchers::StartsWith("cholesky: input[1] holds a NaN or an infinity in "
                                    "its lower triangle (the part the "
                                    "factorisation reads;"));
    CHECK(tt::values(st::raw::cholesky(f64({2, 3, 3}, nan_upper))) == identities(2, 3));

    // triangular_solve: an exact zero on the diagonal of element 1.
    std::vector<double> tri = identities(2, 3);
    tri[std::size_t(9 + 2 * 3 + 2)] = 0.0;
    const RawTensor b = f64({2, 3, 1}, {1, 2, 3, 4, 5, 6});
    CHECK_THROWS_MATCHES(st::raw::triangular_solve(f64({2, 3, 3}, tri), b, {}), st::LinAlgError,
                         Catch::Matchers::Message("triangular_solve: input[1] is singular: its "
                                                  "diagonal element 2 is zero"));
    // ... which unit_diagonal never reads.
    CHECK(tt::values(st::raw::triangular_solve(f64({2, 3, 3}, tri), b, {.unit_diagonal = true})) ==
          std::vector<double>{1, 2, 3, 4, 5, 6});
    // An infinity in the right-hand side, named by b's own batch index.
    CHECK_THROWS_MATCHES(
        st::raw::triangular_solve(f64({3, 3}, identities(1, 3)),
                                  f64({2, 3, 1}, {1, 2, 3, 4, kInf, 6}), {}),
        st::LinAlgError,
        Catch::Matchers::Message("triangular_solve: the right-hand side b[1] holds a NaN or an "
                                 "infinity"));
    std::vector<double> upper_nan = identities(1, 3);
    upper_nan[1] = kNaN;
    CHECK_THROWS_WITH(
        st::raw::triangular_solve(f64({3, 3}, upper_nan), f64({3, 1}, {1, 2, 3}), {.lower = false}),
        Equals("triangular_solve: input holds a NaN or an infinity in its upper "
               "triangle (the part the op reads)"));

    // lu: a singular matrix is no error, a NaN is.
    CHECK_NOTHROW(st::raw::lu(f64({2, 2}, {1, 2, 2, 4})));
    CHECK_THROWS_MATCHES(st::raw::lu(f64({2, 2, 2}, {1, 0, 0, 1, 1, kNaN, 0, 1})), st::LinAlgError,
                         Catch::Matchers::Message("lu: input[1] holds a NaN or an infinity"));
    // eigh, svd, qr: a NaN or an infinity anywhere they read.
    CHECK_THROWS_AS(st::raw::eigh(f64({2, 2}, {1, 0, -kInf, 1})), st::LinAlgError);
    CHECK_THROWS_WITH(st::raw::eigh(f64({2, 2}, {1, 0, -kInf, 1})),
                      Catch::Matchers::StartsWith("eigh: input holds a NaN or an infinity in its "
                                                  "lower triangle (the part the factorisation "
                                                  "reads;"));
    CHECK_THROWS_MATCHES(st::raw::svd(f64({1, 2, 3}, {1, 2, 3, 4, kNaN, 6})), st::LinAlgError,
                         Catch::Matchers::Message("svd: input[0] holds a NaN or an infinity"));
    CHECK_THROWS_MATCHES(st::raw::qr(f64({3, 2}, {1, 2, 3, kInf, 5, 6})), st::LinAlgError,
                         Catch::Matchers::Message("qr: input holds a NaN or an infinity"));
    // A NaN in f32 too.
    CHECK_THROWS_AS(st::raw::cholesky(tt::make({1, 1}, DType::f32, {kNaN})), st::LinAlgError);
  });
  CHECK(printed.empty());
}

TEST_CASE("linalg errors: shapes, dtypes and undefined tensors", "[raw][linalg]") {
  const RawTensor sq = f64({3, 3}, identities(1, 3));
  const std::string printed = stderr_of([&] {
    // Not square.
    CHECK_THROWS_MATCHES(st::raw::cholesky(f64({2, 3}, {1, 2, 3, 4, 5, 6})), st::ShapeError,
                         Catch::Matchers::Message("cholesky: input has shape [2, 3]: its matrices "
                                                  "are 2 x 3, need square ones [..., n, n]"));
    CHECK_THROWS_AS(st::raw::lu(f64({2, 3}, {1, 2, 3, 4, 5, 6})), st::ShapeError);
    CHECK_THROWS_WITH(st::raw::eigh(f64({1, 3, 2}, {1, 2, 3, 4, 5, 6})),
                      Contains("eigh: input has shape [1, 3, 2]"));
    CHECK_THROWS_WITH(st::raw::triangular_solve(f64({2, 3}, {1, 2, 3, 4, 5, 6}), sq, {}),
                      Contains("triangular_solve: a has shape [2, 3]: its matrices are 2 x 3"));
    // Rank below 2.
    CHECK_THROWS_MATCHES(st::raw::svd(f64({3}, {1, 2, 3})), st::ShapeError,
                         Catch::Matchers::Message("svd: input has shape [3], needs matrices: rank "
                                                  ">= 2, [..., rows, cols]"));
    CHECK_THROWS_AS(st::raw::qr(f64({}, {1})), st::ShapeError);
    // b does not fit A, on either side.
    CHECK_THROWS_MATCHES(
        st::raw::triangular_solve(sq, f64({2, 2}, {1, 2, 3, 4}), {}), st::ShapeError,
        Catch::Matchers::Message("triangular_solve: b of shape [2, 2] does not fit a of shape "
                                 "[3, 3] (left: A X = B needs b [..., n, k] with n = 3)"));
    CHECK_THROWS_WITH(
        st::raw::triangular_solve(sq, f64({3, 2}, {1, 2, 3, 4, 5, 6}), {.left = false}),
        Contains("(right: X A = B needs b [..., k, n] with n = 3)"));
    // Batch dims that do not broadcast.
    CHECK_THROWS_AS(st::raw::triangular_solve(f64({2, 3, 3}, identities(2, 3)),
                                              f64({3, 3, 1}, std::vector<double>(9, 1.0)), {}),
                    st::ShapeError);
    // Dtypes: integers, bool, and two different float dtypes.
    CHECK_THROWS_MATCHES(st::raw::cholesky(tt::make({2, 2}, DType::i64, {1, 0, 0, 1})),
                         st::DTypeError,
                         Catch::Matchers::Message("cholesky: dtype i64 is not supported (needs f32 "
                                                  "or f64)"));
    CHECK_THROWS_AS(st::raw::qr(tt::make({2, 2}, DType::i32, {1, 0, 0, 1})), st::DTypeError);
    CHECK_THROWS_AS(st::raw::svd(tt::make({2, 2}, DType::b8, {1, 0, 0, 1})), st::DTypeError);
    CHECK_THROWS_MATCHES(
        st::raw::triangular_solve(sq, tt::make({3, 1}, DType::f32, {1, 2, 3}), {}), st::DTypeError,
        Catch::Matchers::Message("triangular_solve: dtypes f64 and f32 differ (cast one first)"));
    // Undefined tensors.
    CHECK_THROWS_AS(st::raw::eigh(RawTensor()), st::ValueError);
    CHECK_THROWS_AS(st::raw::triangular_solve(sq, RawTensor(), {}), st::ValueError);
  });
  CHECK(printed.empty());
}

TEST_CASE("lu_inverse errors: singular U, NaN, bad permutations, shapes and dtypes",
          "[raw][linalg]") {
  const RawTensor id = tt::make({3}, DType::i64, {0, 1, 2});
  const std::vector<double> eye = identities(2, 3), eye1 = identities(1, 3);
  std::vector<double> zero_pivot = eye;
  zero_pivot[9 + 8] = 0;  // U[1][2, 2]
  std::string printed = stderr_of([&] {
    CHECK_THROWS_MATCHES(
        st::raw::lu_inverse(f64({2, 3, 3}, zero_pivot), id), st::LinAlgError,
        Catch::Matchers::Message("lu_inverse: lu[1] is singular: U's diagonal element 2 is zero"));
    std::vector<double> nan = eye;
    nan[3] = kNaN;  // below the diagonal: L's part is read too
    CHECK_THROWS_MATCHES(st::raw::lu_inverse(f64({2, 3, 3}, nan), id), st::LinAlgError,
                         Catch::Matchers::Message("lu_inverse: lu[0] holds a NaN or an infinity"));
    CHECK_THROWS_MATCHES(
        st::raw::lu_inverse(f64({2, 3, 3}, eye), tt::make({2, 3}, DType::i64, {0, 1, 2, 0, 3, 1})),
        st::LinAlgError,
        Catch::Matchers::Message("lu_inverse: perm[1] is not a permutation of 0..2"));
    CHECK_THROWS_MATCHES(
        st::raw::lu_inverse(f64({3, 3}, eye1), tt::make({3}, DType::i64, {2, 0, 2})),
        st::LinAlgError, Catch::Matchers::Message("lu_inverse: perm is not a permutation of 0..2"));
    CHECK_THROWS_AS(st::raw::lu_inverse(f64({3, 3}, eye1), tt::make({3}, DType::i64, {0, -1, 2})),
                    st::LinAlgError);
  });
  CHECK(printed.empty());
  CHECK_THROWS_MATCHES(st::raw::lu_inverse(f64({3, 3}, eye1), tt::make({3}, DType::f64, {0, 1, 2})),
                       st::DTypeError,
                       Catch::Matchers::Message("lu_inverse: perm has dtype f64, needs i64 (the "
                                                "permutation lu returns)"));
  CHECK_THROWS_MATCHES(st::raw::lu_inverse(f64({3, 3}, eye1), tt::make({2}, DType::i64, {0, 1})),
                       st::ShapeError,
                       Catch::Matchers::Message("lu_inverse: perm of shape [2] does not fit lu "
                                                "of shape [3, 3] (needs [..., 3])"));
  CHECK_THROWS_AS(st::raw::lu_inverse(f64({2, 3}, {1, 2, 3, 4, 5, 6}), id), st::ShapeError);
  CHECK_THROWS_AS(
      st::raw::lu_inverse(f64({2, 3, 3}, eye), tt::make({3, 3}, DType::i64, identities(1, 3))),
      st::ShapeError);  // batch dims [2] and [3] do not broadcast
  CHECK_THROWS_AS(st::raw::lu_inverse(tt::make({2, 2}, DType::i32, {1, 0, 0, 1}), id),
                  st::DTypeError);
  CHECK_THROWS_AS(st::raw::lu_inverse(RawTensor(), id), st::ValueError);
  CHECK_THROWS_AS(st::raw::lu_inverse(f64({3, 3}, eye1), RawTensor()), st::ValueError);
}

TEST_CASE("linalg: empty batches and empty matrices give empty results", "[raw][linalg]") {
  const RawTensor none = tt::make({0, 3, 3}, DType::f64, {});
  CHECK(st::raw::cholesky(none).shape() == Shape{0, 3, 3});
  const auto [lu, piv, perm] = st::raw::lu(none);
  CHECK(piv.shape() == Shape{0, 3});
  CHECK(perm.dtype() == DType::i64);
  const auto [w, v] = st::raw::eigh(tt::make({2, 0, 0}, DType::f32, {}));
  CHECK(w.shape() == Shape{2, 0});
  const auto [u, s, vh] = st::raw::svd(tt::make({4, 0}, DType::f64, {}));
  CHECK(u.shape() == Shape{4, 0});
  CHECK(s.shape() == Shape{0});
  CHECK(vh.shape() == Shape{0, 0});
  const auto [q, r] = st::raw::qr(tt::make({0, 5}, DType::f64, {}));
  CHECK(q.shape() == Shape{0, 0});
  CHECK(r.shape() == Shape{0, 5});
  CHECK(st::raw::triangular_solve(none, tt::make({3, 2}, DType::f64, {1, 2, 3, 4, 5, 6}), {})
            .shape() == Shape{0, 3, 2});
  CHECK(st::raw::lu_inverse(none, perm).shape() == Shape{0, 3, 3});
  CHECK(st::raw::lu_inverse(tt::make({0, 0}, DType::f64, {}), tt::make({0}, DType::i64, {}))
            .shape() == Shape{0, 0});
}

TEST_CASE("linalg errors: operands on two devices", "[raw][linalg]") {
  if (st::cuda_device_count() == 0) return;  // needs a CPU and a CUDA tensor
  const RawTensor cpu = st::raw::full({2, 2}, 1.0, DType::f64, st::Device::cpu());
  const RawTensor gpu = st::raw::full({2, 2}, 1.0, DType::f64, st::Device::cuda(0));
  CHECK_THROWS_MATCHES(st::raw::triangular_solve(cpu, gpu, {}), st::DeviceError,
                       Catch::Matchers::Message("triangular_solve: a and b are on different "
                                                "devices (cpu and cuda:0); move one with "
                                                ".to(device)"));
}
