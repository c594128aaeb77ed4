// SPDX-License-Identifier: MIT
// raw::matmul against Eigen (floats) and an exact integer loop, on operands
// of every stride pattern a view can produce, and against the same product of
// contiguous copies made element by element.
#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#if defined(__GLIBC__)
#include <sys/resource.h>
#endif

#include "raw/cpu/eigen_gemm.hpp"
#include "support/naive.hpp"
#include "support/reduce_ref.hpp"
#include "support/sanitizers.hpp"

namespace st = strata;

namespace {

using st::testing::get;
using st::testing::get_int;

/// How the last two dims of an operand are laid out in its storage.
enum class Mat {
  contiguous,   // row-major
  transposed,   // column-major: a contiguous [..., c, r] base, transpose(-1, -2)
  col_sliced,   // a column subset of a wider base: row stride c + 3
  row_sliced,   // a row subset of a taller base (offset)
  flipped,      // both axes reversed: negative strides
  step_sliced,  // every 2nd row and 3rd column
  neg_step,     // every 2nd row, read backwards
  trans_slice,  // column-major with leading dimension r + 2
  broadcast,    // rows or columns expanded from size 1 (zero strides)
};
constexpr Mat kMats[] = {Mat::contiguous, Mat::transposed,  Mat::col_sliced,
                         Mat::row_sliced, Mat::flipped,     Mat::step_sliced,
                         Mat::neg_step,   Mat::trans_slice, Mat::broadcast};
const char* mat_name(Mat m) {
  constexpr const char* names[] = {"contiguous", "transposed",  "col_sliced",
                                   "row_sliced", "flipped",     "step_sliced",
                                   "neg_step",   "trans_slice", "broadcast"};
  return names[int(m)];
}

st::RawTensor contiguous_random(const st::Shape& shape, st::DType dtype, std::mt19937_64& rng) {
  return st::testing::random_tensor(shape, dtype, st::testing::LayoutKind::contiguous, rng);
}

/// A random operand of logical shape `shape` (rank >= 2) whose matrix dims are laid out as `kind`.
st::RawTensor operand(const st::Shape& shape, st::DType dtype, Mat kind, std::mt19937_64& rng) {
  const std::size_t nd = shape.size();
  const int64_t r = shape[nd - 2], c = shape[nd - 1];
  st::Shape base = shape;
  switch (kind) {
    case Mat::contiguous:
      return contiguous_random(shape, dtype, rng);
    case Mat::transposed:
      std::swap(base[nd - 2], base[nd - 1]);
      return contiguous_random(base, dtype, rng).transpose(-1, -2);
    case Mat::col_sliced:
      base[nd - 1] = c + 3;
      return contiguous_random(base, dtype, rng).slice(-1, 1, 1 + c);
    case Mat::row_sliced:
      base[nd - 2] = r + 3;
      return contiguous_random(base, dtype, rng).slice(-2, 2, 2 + r);
    case Mat::flipped:
      return contiguous_random(shape, dtype, rng).flip(-1).flip(-2);
    case Mat::step_sliced:
      base[nd - 2] = 2 * r, base[nd - 1] = 3 * c;
      return contiguous_random(base, dtype, rng).slice(-2, 0, 2 * r, 2).slice(-1, 1, 3 * c, 3);
    case Mat::neg_step:
      base[nd - 2] = 2 * r;
      return contiguous_random(base, dtype, rng).slice(-2, std::nullopt, std::nullopt, -2);
    case Mat::trans_slice:
      base[nd - 2] = c, base[nd - 1] = r + 2;
      return contiguous_random(base, dtype, rng).slice(-1, 0, r).transpose(-1, -2);
    case Mat::broadcast: {
      // Alternate: rows broadcast ([..., 1, c] expanded) or columns ([..., r, 1] expanded).
      std::bernoulli_distribution rows(0.5);
      if (rows(rng)) {
        base[nd - 2] = 1;
      } else {
        base[nd - 1] = 1;
      }
      return contiguous_random(base, dtype, rng).expand(shape);
    }
  }
  return {};
}

/// Batch dims of a shape (all but the last two).
st::Shape batch_of(const st::Shape& s) { return st::Shape(s.begin(), s.end() - 2); }

/// NumPy broadcast of two batch shapes, computed here (not with strata's helper).
st::Shape broadcast(const st::Shape& a, const st::Shape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  st::Shape out(n, 1);
  for (std::size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// The index into an operand's batch dims for an output batch index (broadcast dims read 0).
std::vector<int64_t> operand_index(const st::Shape& op_batch,
                                   const std::vector<int64_t>& out_batch) {
  std::vector<int64_t> idx(op_batch.size());
  const std::size_t lead = out_batch.size() - op_batch.size();
  for (std::size_t i = 0; i < op_batch.size(); ++i)
    idx[i] = op_batch[i] == 1 ? 0 : out_batch[lead + i];
  return idx;
}

/// Compares raw::matmul(a, b) with Eigen (floats, per batch, in double) or an
/// exact int64 loop (integers); returns "" when they agree.
std::string check_matmul(const st::RawTensor& a, const st::RawTensor& b) {
  const int64_t m = a.shape()[a.shape().size() - 2], k = a.shape()[a.shape().size() - 1];
  const int64_t n = b.shape()[b.shape().size() - 1];
  const st::Shape ba = batch_of(a.shape()), bb = batch_of(b.shape());
  st::Shape want_shape = broadcast(ba, bb);
  const st::Shape batch = want_shape;
  want_shape.push_back(m), want_shape.push_back(n);

  std::ostringstream os;
  os.precision(17);
  os << dtype_name(a.dtype()) << " " << a.shape() << " strides " << a.strides() << " x "
     << b.shape() << " strides " << b.strides() << ": ";
  const st::RawTensor c = st::raw::matmul(a, b);
  if (c.shape() != want_shape) {
    os << "shape " << c.shape() << ", expected " << want_shape;
    return os.str();
  }
  if (c.dtype() != a.dtype()) {
    os << "dtype " << dtype_name(c.dtype());
    return os.str();
  }
  const bool floating = st::is_floating(a.dtype());
  const double eps = a.dtype() == st::f32 ? 1e-6 * double(k + 1) : 1e-12 * double(k + 1);
  std::string bad;
  st::testing::for_each_index(batch, [&](const std::vector<int64_t>& bi) {
    if (!bad.empty()) return;
    std::vector<int64_t> ia = operand_index(ba, bi), ib = operand_index(bb, bi), ic = bi;
    ia.resize(ia.size() + 2), ib.resize(ib.size() + 2), ic.resize(ic.size() + 2);
    auto at = [](std::vector<int64_t>& idx, int64_t i, int64_t j) -> const std::vector<int64_t>& {
      idx[idx.size() - 2] = i, idx[idx.size() - 1] = j;
      return idx;
    };
    if (floating) {
      Eigen::MatrixXd A(m, k), B(k, n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p) A(i, p) = get(a, at(ia, i, p));
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j) B(p, j) = get(b, at(ib, p, j));
      const Eigen::MatrixXd C = A * B;
      const Eigen::MatrixXd S = A.cwiseAbs() * B.cwiseAbs();  // rounding error scale
      for (int64_t i = 0; i < m && bad.empty(); ++i) {
        for (int64_t j = 0; j < n && bad.empty(); ++j) {
          const double got = get(c, at(ic, i, j));
          if (!(std::fabs(got - C(i, j)) <= eps * S(i, j) + 1e-300)) {
            os << "batch " << st::Shape(bi) << " element (" << i << ", " << j << ") is " << got
               << ", expected " << C(i, j);
            bad = os.str();
          }
        }
      }
    } else {
      for (int64_t i = 0; i < m && bad.empty(); ++i) {
        for (int64_t j = 0; j < n && bad.empty(); ++j) {
          int64_t want = 0;  // test values are in [-9, 9]: no overflow
          for (int64_t p = 0; p < k; ++p)
            want += get_int(a, at(ia, i, p)) * get_int(b, at(ib, p, j));
          const int64_t got = get_int(c, at(ic, i, j));
          if (got != want) {
            os << "batch " << st::Shape(bi) << " element (" << i << ", " << j << ") is " << got
               << ", expected " << want;
            bad = os.str();
          }
        }
      }
    }
  });
  return bad;
}

/// raw::matmul(a, b) equals raw::matmul of contiguous copies (made element by element).
std::string check_same_as_copies(const st::RawTensor& a, const st::RawTensor& b) {
  const st::RawTensor got = st::raw::matmul(a, b);
  const st::RawTensor want = st::raw::matmul(st::testing::copy_of(a), st::testing::copy_of(b));
  std::ostringstream os;
  os << a.shape() << " strides " << a.strides() << " x " << b.shape() << " strides " << b.strides()
     << ": ";
  if (got.shape() != want.shape()) {
    os << "shape " << got.shape() << " vs " << want.shape();
    return os.str();
  }
  const int64_t k = a.shape()[a.shape().size() - 1];
  const std::vector<double> g = st::testing::values(got), w = st::testing::values(want);
  const double eps = a.dtype() == st::f32   ? 1e-5 * double(k + 1)
                     : a.dtype() == st::f64 ? 1e-12 * double(k + 1)
                                            : 0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (!(std::fabs(g[i] - w[i]) <= eps * (1 + std::fabs(w[i])))) {
      os << "element " << i << " is " << g[i] << ", copies give " << w[i];
      return os.str();
    }
  }
  return "";
}

constexpr st::DType kNumericDTypes[] = {st::f32, st::f64, st::i32, st::i64};

}  // namespace

TEST_CASE("matmul: every operand layout against Eigen and integer loops", "[raw]") {
  std::mt19937_64 rng(8675309);
  std::uniform_int_distribution<int64_t> dim(1, 7);
  for (st::DType dtype : kNumericDTypes) {
    for (Mat ka : kMats) {
      for (Mat kb : kMats) {
        const int64_t m = dim(rng), k = dim(rng), n = dim(rng);
        const st::RawTensor a = operand({m, k}, dtype, ka, rng);
        const st::RawTensor b = operand({k, n}, dtype, kb, rng);
        INFO(mat_name(ka) << " x " << mat_name(kb));
        CHECK(check_matmul(a, b) == "");
        CHECK(check_same_as_copies(a, b) == "");
        // The same with a batch dim on both operands.
        const st::RawTensor a3 = operand({3, m, k}, dtype, ka, rng);
        const st::RawTensor b3 = operand({3, k, n}, dtype, kb, rng);
        CHECK(check_matmul(a3, b3) == "");
        CHECK(check_same_as_copies(a3, b3) == "");
      }
    }
  }
}

TEST_CASE("matmul: support-header layouts", "[raw]") {
  std::mt19937_64 rng(1234);
  std::uniform_int_distribution<int64_t> dim(1, 6);
  for (st::DType dtype : kNumericDTypes) {
    for (st::testing::LayoutKind la : st::testing::kAllLayouts) {
      for (st::testing::LayoutKind lb : st::testing::kAllLayouts) {
        const int64_t m = dim(rng), k = dim(rng), n = dim(rng);
        const st::RawTensor a = st::testing::random_tensor({2, m, k}, dtype, la, rng);
        const st::RawTensor b = st::testing::random_tensor({2, k, n}, dtype, lb, rng);
        INFO(st::testing::layout_name(la) << " x " << st::testing::layout_name(lb));
        CHECK(check_matmul(a, b) == "");
        CHECK(check_same_as_copies(a, b) == "");
      }
    }
  }
}

TEST_CASE("matmul: batch dims", "[raw]") {
  std::mt19937_64 rng(555);
  SECTION("broadcast batch dims") {
    for (st::DType dtype : kNumericDTypes) {
      for (Mat ka : kMats) {
        const Mat kb = kMats[std::size_t(int(ka) * 4 % 9)];
        // [2, 1, m, k] x [3, k, n] -> [2, 3, m, n]
        const st::RawTensor a = operand({2, 1, 4, 5}, dtype, ka, rng);
        const st::RawTensor b = operand({3, 5, 2}, dtype, kb, rng);
        CHECK(st::raw::matmul(a, b).shape() == st::Shape{2, 3, 4, 2});
        CHECK(check_matmul(a, b) == "");
        CHECK(check_same_as_copies(a, b) == "");
        // A matrix against a batch, both ways round.
        const st::RawTensor a2 = operand({4, 5}, dtype, ka, rng);
        CHECK(check_matmul(a2, b) == "");
        CHECK(check_matmul(b.transpose(-1, -2), a2.transpose(-1, -2)) == "");
        // Batch dims broadcast by expand (zero batch strides).
        const st::RawTensor ae = operand({1, 4, 5}, dtype, ka, rng).expand({3, 4, 5});
        CHECK(check_matmul(ae, b) == "");
        CHECK(check_same_as_copies(ae, b) == "");
      }
    }
  }
  SECTION("permuted batch dims") {
    for (st::DType dtype : kNumericDTypes) {
      for (Mat ka : kMats) {
        // [3, 2, m, k] stored, viewed as [2, 3, m, k]: batch strides swapped.
        const st::RawTensor a = operand({3, 2, 4, 3}, dtype, ka, rng).transpose(0, 1);
        const st::RawTensor b = operand({2, 3, 3, 5}, dtype, Mat::contiguous, rng);
        CHECK(check_matmul(a, b) == "");
        CHECK(check_same_as_copies(a, b) == "");
        const st::RawTensor b2 = operand({3, 2, 3, 5}, dtype, ka, rng).permute({1, 0, 2, 3});
        CHECK(check_matmul(a, b2) == "");
        CHECK(check_same_as_copies(b2.transpose(-1, -2), a.transpose(-1, -2)) == "");
        // Batch dims stored innermost: [m, k, 2, 3] viewed as [2, 3, m, k].
        const st::RawTensor ai =
            operand({4, 3, 2, 3}, dtype, Mat::contiguous, rng).permute({2, 3, 0, 1});
        CHECK(check_matmul(ai, b) == "");
        CHECK(check_same_as_copies(ai, b) == "");
      }
    }
    for (int trial = 0; trial < 12; ++trial) {
      const st::RawTensor a =
          st::testing::random_tensor({2, 3, 4, 5}, st::f64, st::testing::LayoutKind::permuted, rng);
      const st::RawTensor b =
          st::testing::random_tensor({3, 5, 2}, st::f64, st::testing::LayoutKind::permuted, rng);
      CHECK(check_matmul(a, b) == "");
      CHECK(check_same_as_copies(a, b) == "");
    }
  }
  SECTION("narrowed batch dims") {
    for (st::DType dtype : kNumericDTypes) {
      for (Mat ka : kMats) {
        const st::RawTensor a = operand({5, 3, 4}, dtype, ka, rng).slice(0, 1, 4);  // batches 1..3
        const st::RawTensor b = operand({6, 4, 2}, dtype, Mat::transposed, rng).slice(0, 0, 6, 2);
        CHECK(check_matmul(a, b) == "");
        CHECK(check_same_as_copies(a, b) == "");
        const st::RawTensor bf =
            operand({3, 4, 2}, dtype, ka, rng).flip(0);  // negative batch stride
        CHECK(check_matmul(a, bf) == "");
        CHECK(check_same_as_copies(a, bf) == "");
        // Two batch dims, one narrowed with a negative step.
        const st::RawTensor a2 = operand({2, 7, 3, 4}, dtype, ka, rng).slice(1, 6, 0, -2);
        const st::RawTensor b2 = operand({1, 3, 4, 2}, dtype, Mat::col_sliced, rng);
        CHECK(check_matmul(a2, b2) == "");
        CHECK(check_same_as_copies(a2, b2) == "");
      }
    }
  }
  SECTION("rank 9 and rank 12") {
    for (st::DType dtype : {st::f64, st::i64}) {
      const st::RawTensor a = operand({2, 1, 2, 1, 1, 2, 1, 3, 4}, dtype, Mat::transposed, rng);
      const st::RawTensor b = operand({2, 1, 1, 2, 1, 1, 4, 2}, dtype, Mat::col_sliced, rng);
      CHECK(st::raw::matmul(a, b).shape() == st::Shape{2, 2, 2, 1, 2, 2, 1, 3, 2});
      CHECK(check_matmul(a, b) == "");
      CHECK(check_same_as_copies(a, b) == "");
      const st::RawTensor a12 = st::testing::random_tensor(
          {1, 2, 1, 2, 1, 1, 2, 1, 1, 2, 2, 3}, dtype, st::testing::LayoutKind::permuted, rng);
      const st::RawTensor b12 = st::testing::random_tensor(
          {2, 1, 2, 1, 1, 1, 1, 1, 1, 1, 3, 2}, dtype, st::testing::LayoutKind::flipped, rng);
      CHECK(check_matmul(a12, b12) == "");
      CHECK(check_same_as_copies(a12, b12) == "");
    }
  }
}

TEST_CASE("matmul: edge sizes", "[raw]") {
  std::mt19937_64 rng(2718);
  SECTION("m, n or k equal to 1") {
    const int64_t sizes[][3] = {{1, 5, 4}, {5, 1, 4}, {5, 4, 1}, {1, 1, 4},
                                {1, 5, 1}, {5, 1, 1}, {1, 1, 1}};
    for (st::DType dtype : kNumericDTypes) {
      for (const auto& s : sizes) {
        for (Mat ka : kMats) {
          for (Mat kb :
               {Mat::contiguous, Mat::transposed, Mat::step_sliced, Mat::flipped, Mat::broadcast}) {
            const st::RawTensor a = operand({2, s[0], s[2]}, dtype, ka, rng);
            const st::RawTensor b = operand({2, s[2], s[1]}, dtype, kb, rng);
            INFO(mat_name(ka) << " x " << mat_name(kb));
            CHECK(check_matmul(a, b) == "");
            CHECK(check_same_as_copies(a, b) == "");
          }
        }
      }
    }
  }
  SECTION("k = 0 gives zeros") {
    for (st::DType dtype : kNumericDTypes) {
      const st::RawTensor c =
          st::raw::matmul(st::raw::empty({3, 0}, dtype), st::raw::empty({0, 4}, dtype));
      CHECK(c.shape() == st::Shape{3, 4});
      CHECK(c.dtype() == dtype);
      CHECK(st::testing::values(c) == std::vector<double>(12, 0.0));
      const st::RawTensor a = st::raw::empty({2, 5, 0}, dtype).slice(1, 1, 4);
      const st::RawTensor b = st::raw::empty({1, 2, 0}, dtype).transpose(-1, -2);
      const st::RawTensor cb = st::raw::matmul(a, b);
      CHECK(cb.shape() == st::Shape{2, 3, 2});
      CHECK(st::testing::values(cb) == std::vector<double>(12, 0.0));
    }
  }
  SECTION("size-0 dims") {
    for (st::DType dtype : kNumericDTypes) {
      CHECK(st::raw::matmul(st::raw::empty({0, 3, 4}, dtype), st::raw::empty({0, 4, 5}, dtype))
                .shape() == st::Shape{0, 3, 5});
      CHECK(st::raw::matmul(st::raw::empty({2, 0, 3, 4}, dtype), st::raw::empty({4, 5}, dtype))
                .shape() == st::Shape{2, 0, 3, 5});
      CHECK(st::raw::matmul(st::raw::empty({0, 3, 4}, dtype), st::raw::empty({1, 4, 5}, dtype))
                .shape() == st::Shape{0, 3, 5});
      CHECK(st::raw::matmul(st::raw::empty({0, 4}, dtype), st::raw::empty({4, 5}, dtype)).shape() ==
            st::Shape{0, 5});
      CHECK(st::raw::matmul(st::raw::empty({3, 4}, dtype), st::raw::empty({4, 0}, dtype)).shape() ==
            st::Shape{3, 0});
      CHECK(st::raw::matmul(st::raw::empty({0, 0}, dtype), st::raw::empty({0, 0}, dtype)).shape() ==
            st::Shape{0, 0});
    }
  }
}

TEST_CASE("matmul: large products (threaded path)", "[raw][threads]") {
  std::mt19937_64 rng(200300100);
  SECTION("200 x 300 x 100") {
    for (st::DType dtype : {st::f32, st::f64}) {
      for (Mat ka : {Mat::contiguous, Mat::transposed, Mat::col_sliced, Mat::flipped}) {
        const st::RawTensor a = operand({200, 300}, dtype, ka, rng);
        const st::RawTensor b = operand(
            {300, 100}, dtype, ka == Mat::contiguous ? Mat::transposed : Mat::contiguous, rng);
        INFO(mat_name(ka));
        CHECK(check_matmul(a, b) == "");
      }
      // Tall (split by rows) and a few batches.
      CHECK(check_matmul(operand({400, 100}, dtype, Mat::contiguous, rng),
                         operand({100, 40}, dtype, Mat::row_sliced, rng)) == "");
      CHECK(check_matmul(operand({3, 100, 120}, dtype, Mat::trans_slice, rng),
                         operand({120, 90}, dtype, Mat::contiguous, rng)) == "");
    }
    const st::RawTensor ai = operand({200, 300}, st::i32, Mat::transposed, rng);
    const st::RawTensor bi = operand({300, 100}, st::i32, Mat::contiguous, rng);
    CHECK(check_matmul(ai, bi) == "");
  }
  SECTION("same result on 1 and 2 threads") {
    const int original = st::num_threads();
    const st::RawTensor a = operand({200, 300}, st::f64, Mat::contiguous, rng);
    const st::RawTensor b = operand({300, 100}, st::f64, Mat::col_sliced, rng);
    st::set_num_threads(1);
    const std::vector<double> one = st::testing::values(st::raw::matmul(a, b));
    st::set_num_threads(2);
    const std::vector<double> two = st::testing::values(st::raw::matmul(a, b));
    st::set_num_threads(original);
    REQUIRE(one.size() == two.size());
    double worst = 0;
    for (std::size_t i = 0; i < one.size(); ++i)
      worst = std::max(worst, std::fabs(one[i] - two[i]));
    CHECK(worst <= 1e-11);
  }
}

TEMPLATE_TEST_CASE("matmul: Eigen's GEMM built for every instruction set matches a double loop",
                   "[raw]", float, double) {
  namespace vm = st::detail::vmath;
  using T = TestType;
  std::mt19937_64 rng(71);
  std::normal_distribution<double> normal;
  for (vm::Isa isa : {vm::Isa::sse2, vm::Isa::avx2, vm::Isa::avx512}) {
    const st::detail::GemmKernels* g = st::detail::gemm_kernels_for(isa);
    if (isa == vm::Isa::sse2) REQUIRE(g != nullptr);  // the baseline build is always there
    if (!g) continue;
    INFO("isa " << vm::isa_name(isa));
    // 300 x 260 x 280: Eigen's packed blocks exceed its 128 KiB stack limit, so they come
    // from the thread's kept buffer (KeptBlocking); the small product after it reuses it.
    for (const std::array<int64_t, 3>& shape :
         {std::array<int64_t, 3>{1, 1, 1}, {37, 53, 29}, {300, 260, 280}, {130, 70, 90}}) {
      // Named variables, not a structured binding: clang before 16 cannot capture bindings.
      const int64_t m = shape[0], k = shape[1], n = shape[2];
      for (const bool a_rows : {true, false}) {
        for (const bool b_rows : {true, false}) {
          const int64_t lda = (a_rows ? k : m) + 3, ldb = (b_rows ? n : k) + 2, ldc = n + 5;
          std::vector<T> a(std::size_t(lda * (a_rows ? m : k))),
              b(std::size_t(ldb * (b_rows ? k : n)));
          for (T& v : a) v = T(normal(rng));
          for (T& v : b) v = T(normal(rng));
          auto at = [&](int64_t i, int64_t p) {
            return double(a[std::size_t(a_rows ? i * lda + p : i + p * lda)]);
          };
          auto bt = [&](int64_t p, int64_t j) {
            return double(b[std::size_t(b_rows ? p * ldb + j : p + j * ldb)]);
          };
          // One tile of the product: rows [r0, r1), columns [c0, c1); the rest of c stays.
          const int64_t r0 = m / 3, r1 = m, c0 = n / 4, c1 = n - n / 5;
          std::vector<T> c(std::size_t(m * ldc), T(-7));
          if constexpr (std::is_same_v<T, float>) {
            g->f32({a.data(), m, k, lda, a_rows}, {b.data(), k, n, ldb, b_rows}, c.data(), ldc, r0,
                   r1, c0, c1);
          } else {
            g->f64({a.data(), m, k, lda, a_rows}, {b.data(), k, n, ldb, b_rows}, c.data(), ldc, r0,
                   r1, c0, c1);
          }
          double worst = 0;
          bool untouched = true;
          for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < ldc; ++j) {
              const T got = c[std::size_t(i * ldc + j)];
              if (i < r0 || j < c0 || j >= c1) {
                untouched = untouched && got == T(-7);
                continue;
              }
              double want = 0, scale = 0;
              for (int64_t p = 0; p < k; ++p) {
                want += at(i, p) * bt(p, j);
                scale += std::fabs(at(i, p) * bt(p, j));
              }
              worst = std::max(worst, std::fabs(double(got) - want) / (scale + 1e-300));
            }
          }
          INFO(m << " x " << k << " x " << n << (a_rows ? " A rows" : " A cols")
                 << (b_rows ? " B rows" : " B cols"));
          CHECK(untouched);
          if (isa == vm::Isa::sse2) {
            // The baseline build, kept blocks or not, gives the bits of Eigen's own product
            // expression (compiled here with the same flags).
            std::vector<T> e(c.size(), T(-7));
            auto eigen_product = [&](const auto& A, const auto& B) {
              using Out =
                  Eigen::Map<Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                             Eigen::OuterStride<>>;
              Out C(e.data() + r0 * ldc + c0, r1 - r0, c1 - c0, Eigen::OuterStride<>(ldc));
              C.noalias() = A.middleRows(r0, r1 - r0) * B.middleCols(c0, c1 - c0);
            };
            auto with_b = [&](const auto& A) {
              if (b_rows) {
                eigen_product(A, st::detail::EigenMap<T, Eigen::RowMajor>(
                                     b.data(), k, n, Eigen::OuterStride<>(ldb)));
              } else {
                eigen_product(A, st::detail::EigenMap<T, Eigen::ColMajor>(
                                     b.data(), k, n, Eigen::OuterStride<>(ldb)));
              }
            };
            if (a_rows) {
              with_b(st::detail::EigenMap<T, Eigen::RowMajor>(a.data(), m, k,
                                                              Eigen::OuterStride<>(lda)));
            } else {
              with_b(st::detail::EigenMap<T, Eigen::ColMajor>(a.data(), m, k,
                                                              Eigen::OuterStride<>(lda)));
            }
            CHECK(std::memcmp(c.data(), e.data(), c.size() * sizeof(T)) == 0);
          }
          // The bound of a k-term dot product: k units of roundoff times sum |a b|.
          CHECK(worst <= double(k) * std::numeric_limits<T>::epsilon());
        }
      }
    }
  }
}

// The sanitizers bring their own malloc, which quarantines freed memory.
#if defined(__GLIBC__) && !STRATA_TEST_UNDER_ASAN && !STRATA_TEST_UNDER_TSAN
TEST_CASE("matmul: repeated large f32 products reuse their memory (no page faults)",
          "[raw][threads]") {
  // oneDNN allocates packing buffers on every call, and glibc used to cut them
  // from untouched memory for tens of calls (fill_tcache_bins in
  // raw/cpu/matmul.cpp). The process's minor page faults over eight calls
  // after three are counted: one fresh buffer of these 1024 x 512 tiles is 170
  // faults (AVX2) to 340 (AVX-512), and the result comes from the cache.
  const int original = st::num_threads();
  st::set_num_threads(2);
  std::mt19937_64 rng(4096);
  std::normal_distribution<float> normal;
  // On the CPU whatever the test device, and read in place (host copies would allocate).
  auto random_cpu = [&] {
    const st::RawTensor t = st::raw::empty({1024, 1024}, st::f32, st::Device::cpu());
    float* p = static_cast<float*>(t.storage()->data());
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = normal(rng);
    return t;
  };
  const st::RawTensor a = random_cpu(), b = random_cpu();
  auto minor_faults = [] {
    rusage r{};
    getrusage(RUSAGE_SELF, &r);
    return long(r.ru_minflt);
  };
  auto product = [&] {
    const st::RawTensor c = st::raw::matmul(a, b);
    return static_cast<const float*>(c.storage()->data())[c.offset() + 1023 * 1024 + 511];
  };
  const float first = product();
  for (int warm = 1; warm < 3; ++warm) CHECK(product() == first);
  const long before = minor_faults();
  bool same = true;
  for (int call = 0; call < 8; ++call) same = same && product() == first;
  const long faults = minor_faults() - before;
  st::set_num_threads(original);
  CHECK(same);
  INFO(faults << " minor page faults in 8 products");
  CHECK(faults < 100);
}
#endif

TEST_CASE("matmul: integers are exact beyond 2^53", "[raw]") {
  SECTION("i64") {
    const int64_t p40 = int64_t{1} << 40, p20 = int64_t{1} << 20;
    const std::vector<int64_t> av{p40 + 1, 3, -p40, 7};
    const std::vector<int64_t> bv{p20, 5};
    const st::RawTensor a = st::raw::from_host(av.data(), {2, 2}, st::i64);
    const st::RawTensor b = st::raw::from_host(bv.data(), {2, 1}, st::i64);
    const st::RawTensor c = st::raw::matmul(a, b);
    CHECK(st::testing::get_int(c, {0, 0}) == (p40 + 1) * p20 + 15);  // 2^60 + 2^20 + 15
    CHECK(st::testing::get_int(c, {1, 0}) == -p40 * p20 + 35);
    // The same with a transposed, flipped operand.
    const st::RawTensor ct = st::raw::matmul(b.transpose(0, 1), a.transpose(0, 1).flip(0).flip(0));
    CHECK(st::testing::get_int(ct, {0, 0}) == (p40 + 1) * p20 + 15);
    CHECK(st::testing::get_int(ct, {0, 1}) == -p40 * p20 + 35);
  }
}
