// SPDX-License-Identifier: MIT
// The windows view (Layout::windows, RawTensor::windows) and raw::fold, its transpose
// (col2im), against naive loops over multi-indices: every layout of the input, every dtype,
// one to four windowed axes with strides, dilations and leading axes; the adjoint identity
// <fold(u), v> = <u, windows(v)>; fold's bits for any thread count; and the bad inputs.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "support/elementwise_ref.hpp"
#include "support/message_of.hpp"

namespace st = strata;
namespace tt = strata::testing;
using Catch::Contains;
using st::DType;
using st::RawTensor;
using st::Shape;
using st::Window;

namespace {

/// One windowing: the input's shape (leading axes, then the windowed ones) and the window.
struct WinCase {
  Shape shape;
  Window w;
};

/// The cases: 1 to 4 windowed axes, kernels up to the axis, strides and dilations past 1,
/// leading axes of none to two (one of them 0 in the last case).
std::vector<WinCase> win_cases() {
  return {
      {{7}, {{3}, {1}, {1}}},
      {{2, 9}, {{2}, {3}, {2}}},
      {{3, 5}, {{5}, {2}, {1}}},
      {{2, 3, 6, 5}, {{3, 2}, {1, 2}, {1, 1}}},
      {{4, 7, 8}, {{2, 3}, {2, 1}, {3, 2}}},
      {{1, 2, 5, 4, 6}, {{2, 2, 3}, {2, 1, 2}, {1, 2, 1}}},
      {{3, 4, 5, 3, 4}, {{2, 1, 2, 3}, {1, 3, 2, 1}, {2, 1, 1, 1}}},
      {{0, 2, 5}, {{2}, {1}, {2}}},
  };
}

/// The position of window element (lead..., o..., k...) in the input: (lead..., o s + k d).
std::vector<int64_t> source_of(const std::vector<int64_t>& i, const Window& w) {
  const std::size_t k = w.kernel.size(), lead = i.size() - 2 * k;
  std::vector<int64_t> x(i.begin(), i.begin() + std::ptrdiff_t(lead));
  for (std::size_t a = 0; a < k; ++a) {
    x.push_back(i[lead + a] * w.stride[a] + i[lead + k + a] * w.dilation[a]);
  }
  return x;
}

/// The windows' shape: (S - d (K - 1) - 1) / s + 1 windows on each axis, then the kernel.
Shape windows_shape(const Shape& x, const Window& w) {
  const int64_t k = w.kernel.ndim(), lead = x.ndim() - k;
  Shape s(x.begin(), x.begin() + lead);
  for (int64_t a = 0; a < k; ++a) {
    s.push_back((x[lead + a] - w.dilation[a] * (w.kernel[a] - 1) - 1) / w.stride[a] + 1);
  }
  for (int64_t d : w.kernel) s.push_back(d);
  return s;
}

/// fold(y) by a naive scatter over y's elements, in double, with each output's sum of
/// absolute terms (its rounding scale).
std::pair<std::vector<double>, std::vector<double>> naive_fold(const RawTensor& y, const Shape& out,
                                                               const Window& w) {
  std::vector<double> sum(std::size_t(tt::numel_of(out)), 0.0), scale(sum.size(), 0.0);
  tt::for_each_index(y.shape(), [&](const std::vector<int64_t>& i) {
    const std::vector<int64_t> p = source_of(i, w);
    int64_t flat = 0;
    for (std::size_t a = 0; a < p.size(); ++a) flat = flat * out[a] + p[a];
    const double v = tt::get(y, i);
    sum[std::size_t(flat)] += v;
    scale[std::size_t(flat)] += std::abs(v);
  });
  return {sum, scale};
}

/// "" when fold(y) matches the naive sums: exactly for integers (which wrap, but these never
/// do), to rounding for floats.
std::string check_fold(const RawTensor& y, const Shape& spatial, const Window& w) {
  const RawTensor got = st::raw::fold(y, w, spatial);
  Shape out(y.shape().begin(), y.shape().end() - 2 * w.kernel.ndim());
  for (int64_t d : spatial) out.push_back(d);
  std::ostringstream os;
  os << "fold " << st::dtype_name(y.dtype()) << " " << y.shape() << " strides " << y.strides()
     << " -> " << out << ": ";
  if (got.shape() != out || got.dtype() != y.dtype() || !got.is_contiguous()) {
    os << "shape " << got.shape() << " dtype " << st::dtype_name(got.dtype());
    return os.str();
  }
  const auto [want, scale] = naive_fold(y, out, w);
  const std::vector<double> g = tt::values(got);
  const double tol = y.dtype() == st::f32 ? 1e-6 : y.dtype() == st::f64 ? 1e-14 : 0.0;
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (std::abs(g[i] - want[i]) > tol * (1 + scale[i])) {
      os << "element " << i << ": " << g[i] << ", expected " << want[i];
      return os.str();
    }
  }
  return "";
}

}  // namespace

TEST_CASE("windows: a view of every window element, on every layout and dtype", "[raw]") {
  std::mt19937_64 rng(3901);
  for (const WinCase& c : win_cases()) {
    for (const DType t : tt::kAllDTypes) {
      for (const tt::LayoutKind kind : tt::kAllLayouts) {
        const RawTensor x = tt::random_tensor(c.shape, t, kind, rng);
        const RawTensor y = x.windows(c.w);
        INFO("windows of " << c.shape << " (" << tt::layout_name(kind) << ", " << tt::dname(t)
                           << "), kernel " << c.w.kernel << " stride " << c.w.stride << " dilation "
                           << c.w.dilation);
        CHECK(y.storage() == x.storage());
        CHECK(tt::first_mismatch(y, windows_shape(c.shape, c.w), t, [&](const auto& i) {
                return tt::get(x, source_of(i, c.w));
              }) == "");
      }
    }
  }
  // The window as long as the axis (one window), and a stride past the axis (one window).
  const RawTensor x = tt::make({2, 4}, st::f64, {0, 1, 2, 3, 4, 5, 6, 7});
  CHECK(x.windows({{4}, {1}, {1}}).shape() == Shape{2, 1, 4});
  CHECK(x.windows({{2}, {9}, {3}}).shape() == Shape{2, 1, 2});
  CHECK(tt::values(x.windows({{2}, {9}, {3}})) == std::vector<double>{0, 3, 4, 7});
}

TEST_CASE("fold: windows summed back into place, on every layout and numeric dtype", "[raw]") {
  std::mt19937_64 rng(3902);
  for (const WinCase& c : win_cases()) {
    const int64_t k = c.w.kernel.ndim();
    const Shape spatial(c.shape.end() - k, c.shape.end());
    const Shape ys = windows_shape(c.shape, c.w);
    for (const DType t : {st::i32, st::i64, st::f32, st::f64}) {
      for (const tt::LayoutKind kind : tt::kAllLayouts) {
        const RawTensor y = tt::random_tensor(ys, t, kind, rng);
        INFO("layout " << tt::layout_name(kind));
        CHECK(check_fold(y, spatial, c.w) == "");
      }
    }
    // y itself a windows view (overlapping reads), permuted.
    const RawTensor big = tt::random_tensor(c.shape, st::f64, tt::LayoutKind::contiguous, rng);
    const RawTensor v = big.windows(c.w);
    CHECK(check_fold(v, spatial, c.w) == "");
  }
  // Positions no window covers are 0: two windows of 2, stride 3, over 6 leave 2 and 5 out;
  // over 7 (the same two windows) 6 too.
  const RawTensor y = tt::make({2, 2}, st::f64, {1, 2, 3, 4});
  const std::vector<double> want6{1, 2, 0, 3, 4, 0}, want7{1, 2, 0, 3, 4, 0, 0};
  CHECK(tt::values(st::raw::fold(y, {{2}, {3}, {1}}, {6})) == want6);
  CHECK(tt::values(st::raw::fold(y, {{2}, {3}, {1}}, {7})) == want7);
}

TEST_CASE("fold is the transpose of windows: <fold(u), v> = <u, windows(v)>", "[raw]") {
  std::mt19937_64 rng(3903);
  for (const WinCase& c : win_cases()) {
    const int64_t k = c.w.kernel.ndim();
    const Shape spatial(c.shape.end() - k, c.shape.end());
    const RawTensor u =
        tt::random_tensor(windows_shape(c.shape, c.w), st::f64, tt::LayoutKind::sliced, rng);
    const RawTensor v = tt::random_tensor(c.shape, st::f64, tt::LayoutKind::permuted, rng);
    const std::vector<double> fu = tt::values(st::raw::fold(u, c.w, spatial)), vv = tt::values(v),
                              uu = tt::values(u), wv = tt::values(v.windows(c.w));
    double lhs = 0, rhs = 0, scale = 0;
    for (std::size_t i = 0; i < fu.size(); ++i) lhs += fu[i] * vv[i];
    for (std::size_t i = 0; i < uu.size(); ++i) {
      rhs += uu[i] * wv[i];
      scale += std::abs(uu[i] * wv[i]);
    }
    INFO("shape " << c.shape << " kernel " << c.w.kernel);
    CHECK(std::abs(lhs - rhs) <= 1e-13 * (1 + scale));
  }
}

TEST_CASE("fold: the same bits for any thread count", "[raw][threads]") {
  tt::ThreadCountGuard guard;
  std::mt19937_64 rng(3904);
  const Window w{{3, 3}, {2, 1}, {1, 2}};
  const RawTensor y = tt::random_tensor({40, 3, 14, 12, 3, 3}, st::f32, tt::LayoutKind::permuted,
                                        rng);  // 40 x 3 blocks of 29 x 16
  st::set_num_threads(1);
  const std::vector<float> one = tt::host_elems<float>(st::raw::fold(y, w, {29, 16}));
  for (int threads : {2, 3, 4}) {
    st::set_num_threads(threads);
    CHECK(tt::host_elems<float>(st::raw::fold(y, w, {29, 16})) == one);
  }
}

TEST_CASE("windows and fold: bad input names the op, the shapes and the fix", "[raw]") {
  const RawTensor x = tt::raw_zeros({2, 3, 5});
  using tt::message_of;
  const std::string big = message_of<st::ShapeError>([&] { (void)x.windows({{6}, {1}, {1}}); });
  CHECK_THAT(big, Contains("windows") && Contains("[2, 3, 5]") && Contains("pad the input"));
  const std::string dil = message_of<st::ShapeError>([&] {
    (void)x.windows({{3, 3}, {1, 1}, {1, 3}});
  });
  CHECK_THAT(dil, Contains("7 elements along axis 2") && Contains("dilation 3"));
  CHECK_THAT(message_of<st::ValueError>([&] {
               (void)x.windows({{2}, {0}, {1}});
             }),
             Contains("windows") && Contains("positive"));
  CHECK_THROWS_AS(x.windows({{2}, {1}, {-1}}), st::ValueError);
  CHECK_THROWS_AS(x.windows({{0}, {1}, {1}}), st::ValueError);
  CHECK_THAT(message_of<st::ShapeError>([&] {
               (void)x.windows({{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}});
             }),
             Contains("rank >= 4"));
  CHECK_THROWS_AS(x.windows({{2, 2}, {1}, {1, 1}}), st::ShapeError);
  CHECK_THROWS_AS(x.windows({{}, {}, {}}), st::ShapeError);

  // Overlapping windows are read-only; windows that do not overlap may be written.
  CHECK_THAT(message_of<st::ValueError>([&] {
               st::raw::fill_(x.windows({{3}, {1}, {1}}), 1.0);
             }),
             Contains("fill_") && Contains("overlap"));
  CHECK_THROWS_AS(
      st::raw::copy_(x.windows({{2, 2}, {1, 2}, {1, 2}}), tt::raw_zeros({2, 2, 2, 2, 2})),
      st::ValueError);
  const RawTensor fresh = tt::raw_zeros({2, 3, 5});
  st::raw::fill_(fresh.windows({{2}, {3}, {1}}), 1.0);  // positions 0, 1, 3, 4 of each row
  CHECK(tt::values(fresh.select(0, 0).select(0, 0)) == std::vector<double>{1, 1, 0, 1, 1});

  const RawTensor y = tt::raw_zeros({2, 3, 3});  // windows of 3 over 5 with stride 1
  const Window w{{3}, {1}, {1}};
  CHECK(st::raw::fold(y, w, {5}).shape() == Shape{2, 5});
  CHECK_THAT(message_of<st::ShapeError>([&] { (void)st::raw::fold(y, w, {6}); }),
             Contains("fold") && Contains("[2, 3, 3]") && Contains("[2, 4, 3]"));
  CHECK_THROWS_AS(st::raw::fold(y, {{2}, {1}, {1}}, {4}), st::ShapeError);  // kernel 2 vs 3
  CHECK_THROWS_AS(st::raw::fold(y, w, {5, 5}), st::ShapeError);             // kernel entries
  CHECK_THROWS_AS(st::raw::fold(y, {{3, 3}, {1, 1}, {1, 1}}, {5, 5}), st::ShapeError);  // rank
  CHECK_THROWS_AS(st::raw::fold(y, w, {2}), st::ShapeError);  // window longer than the axis
  CHECK_THROWS_AS(st::raw::fold(tt::raw_zeros({2, 3, 3}, st::bool_), w, {5}), st::DTypeError);
  CHECK_THROWS_AS(st::raw::fold(RawTensor(), w, {5}), st::ValueError);
}
