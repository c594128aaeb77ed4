// SPDX-License-Identifier: MIT
// softmax, log_softmax and logsumexp (diff/activations.hpp, diff/statistics.hpp)
// on slices holding infinities and NaN: one rule for the three, PyTorch's and
// JAX's. The expected values were computed once with PyTorch 1.13.1 (Debian's
// python3-torch) in float64:
//   t = torch.tensor(row, dtype=torch.float64)
//   t.softmax(0), t.log_softmax(0), torch.logsumexp(t, 0)
// jax.nn.softmax and jax.nn.log_softmax shift by the max as PyTorch does, and
// jax.nn.logsumexp shifts by 0 where the max is infinite: the same values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/diff_ref.hpp"

namespace st = strata;
using namespace st::testing::diff_ref;

namespace {
const double kNan = std::nan("");

/// Requires got (any float dtype) to equal want: NaN where want is NaN, the same infinity
/// where want is infinite, within a relative tol elsewhere.
void require_values_or_nan(const st::Tensor& got, const st::Shape& shape, const Vec& want,
                           double tol = 1e-15) {
  REQUIRE(got.shape() == shape);
  const Vec g = got.to(st::f64).to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    INFO("element " << i << ": got " << g[i] << ", want " << want[i]);
    if (std::isnan(want[i])) {
      CHECK(std::isnan(g[i]));
    } else if (std::isinf(want[i])) {
      CHECK(g[i] == want[i]);
    } else {
      CHECK(std::abs(g[i] - want[i]) <= tol * (1 + std::abs(want[i])));
    }
  }
}

// One row per case, and PyTorch's results for it.
struct Case {
  Vec row, softmax, log_softmax;
  double logsumexp;
};
const std::vector<Case> kCases = {
    {{kInf, 1.0}, {kNan, kNan}, {kNan, kNan}, kInf},
    {{-kInf, 1.0}, {0.0, 1.0}, {-kInf, 0.0}, 1.0},
    {{-kInf, -kInf}, {kNan, kNan}, {kNan, kNan}, -kInf},
    {{kInf, kInf}, {kNan, kNan}, {kNan, kNan}, kInf},
    {{kInf, -kInf}, {kNan, kNan}, {kNan, kNan}, kInf},
    {{-kInf, kInf}, {kNan, kNan}, {kNan, kNan}, kInf},
    {{kNan, 1.0}, {kNan, kNan}, {kNan, kNan}, kNan},
    {{1.0, 2.0},
     {0.26894142136999516, 0.7310585786300049},
     {-1.3132616875182228, -0.31326168751822286},
     2.313261687518223},
};
}  // namespace

TEST_CASE("softmax, log_softmax and logsumexp with infinities: PyTorch's values", "[diff]") {
  Vec rows, soft, logsoft, lse;
  for (const Case& c : kCases) {
    INFO("row " << c.row[0] << ", " << c.row[1]);
    const st::Tensor t = st::from_vector(c.row, {2});
    require_values_or_nan(st::softmax(t, 0), {2}, c.softmax);
    require_values_or_nan(st::log_softmax(t, 0), {2}, c.log_softmax);
    require_values_or_nan(st::logsumexp(t, {0}), {}, {c.logsumexp});
    rows.insert(rows.end(), c.row.begin(), c.row.end());
    soft.insert(soft.end(), c.softmax.begin(), c.softmax.end());
    logsoft.insert(logsoft.end(), c.log_softmax.begin(), c.log_softmax.end());
    lse.push_back(c.logsumexp);
  }
  // All rows at once, along axis 1 (each row its own slice), and transposed along axis 0.
  const int64_t n = int64_t(kCases.size());
  const st::Tensor m = st::from_vector(rows, {n, 2});
  require_values_or_nan(st::softmax(m, 1), {n, 2}, soft);
  require_values_or_nan(st::log_softmax(m, -1), {n, 2}, logsoft);
  require_values_or_nan(st::logsumexp(m, {1}), {n}, lse);
  require_values_or_nan(st::logsumexp(m, 1, true), {n, 1}, lse);
  const st::Tensor mt = m.transpose(0, 1);
  require_values_or_nan(st::softmax(mt, 0).transpose(0, 1), {n, 2}, soft);
  require_values_or_nan(st::log_softmax(mt, 0).transpose(0, 1), {n, 2}, logsoft);
  require_values_or_nan(st::logsumexp(mt, {0}), {n}, lse);
  SECTION("f32") {
    const st::Tensor m32 = m.to(st::f32);
    require_values_or_nan(st::softmax(m32, 1), {n, 2}, soft, 1e-7);
    require_values_or_nan(st::log_softmax(m32, 1), {n, 2}, logsoft, 1e-7);
    require_values_or_nan(st::logsumexp(m32, {1}), {n}, lse, 1e-7);
  }
  SECTION("a longer slice, and a reduction over several axes") {
    // PyTorch: softmax and log_softmax of [inf, 1, -inf] are NaN throughout; logsumexp inf.
    const st::Tensor r = st::from_vector(Vec{kInf, 1.0, -kInf}, {3});
    require_values_or_nan(st::softmax(r, 0), {3}, {kNan, kNan, kNan});
    require_values_or_nan(st::log_softmax(r, 0), {3}, {kNan, kNan, kNan});
    require_values_or_nan(st::logsumexp(r), {}, {kInf});
    // torch.logsumexp(t, (0, 1)) of [[-inf, -inf], [-inf, -inf]] is -inf, of one +inf inf.
    require_values_or_nan(st::logsumexp(st::full({2, 2}, -kInf, st::f64), {0, 1}), {}, {-kInf});
    const st::Tensor one_inf = st::from_vector(Vec{0.5, -kInf, kInf, 2.0}, {2, 2});
    require_values_or_nan(st::logsumexp(one_inf, {0, 1}), {}, {kInf});
    require_values_or_nan(st::logsumexp(one_inf), {}, {kInf});
  }
  SECTION("finite rows are unchanged: the shift stays the max") {
    // Rows whose naive exp overflows or underflows: exact against the f64 formula shifted by
    // the max, with -inf entries beside finite ones giving 0 and -inf.
    const st::Tensor h =
        st::from_vector(Vec{1000.0, 999.0, -kInf, -1000.0, -1001.0, -kInf}, {2, 3});
    const double a = 1.0 / (1.0 + std::exp(-1.0)), b = std::exp(-1.0) / (1.0 + std::exp(-1.0));
    const double l = std::log1p(std::exp(-1.0));
    require_values_or_nan(st::softmax(h, 1), {2, 3}, {a, b, 0.0, a, b, 0.0}, 1e-14);
    require_values_or_nan(st::log_softmax(h, 1), {2, 3}, {-l, -1.0 - l, -kInf, -l, -1.0 - l, -kInf},
                          1e-14);
    require_values_or_nan(st::logsumexp(h, {1}), {2}, {1000.0 + l, -1000.0 + l}, 1e-14);
  }
}
