// SPDX-License-Identifier: MIT
// The non-template parts of st::jacobian_sparsity, st::hessian_sparsity and the sparse
// derivatives (ad/sparse/sparse.hpp): patterns from traced outputs, the plans' checks, and
// reading the entries out of the compressed product.
#include "ad/sparse/sparse.hpp"

#include <algorithm>

namespace strata::detail {

SparsityPattern jacobian_pattern(const SparsityTracer& y, int64_t n) {
  const int64_t m = y.numel();
  std::vector<int64_t> crow(static_cast<std::size_t>(m) + 1, 0), col;
  for (int64_t i = 0; i < m; ++i) {
    if (y.deps()) {
      const std::span<const int64_t> s = (*y.deps())[i];
      col.insert(col.end(), s.begin(), s.end());
    }
    crow[std::size_t(i) + 1] = int64_t(col.size());
  }
  return SparsityPattern(m, n, std::move(crow), std::move(col));
}

SparsityPattern hessian_pattern(const SparsityTracer& y, int64_t n) {
  require_single_element(y.shape(), "hessian_sparsity");
  std::vector<int64_t> crow(static_cast<std::size_t>(n) + 1, 0), col;
  const std::span<const int64_t> keys = y.pairs() ? (*y.pairs())[0] : std::span<const int64_t>{};
  // Each pair (i, j), i <= j, is (i, j) and (j, i) of the symmetric pattern.
  for (int64_t key : keys) {
    ++crow[std::size_t(pair_first(key)) + 1];
    if (pair_first(key) != pair_second(key)) ++crow[std::size_t(pair_second(key)) + 1];
  }
  for (std::size_t i = 0; i < std::size_t(n); ++i) crow[i + 1] += crow[i];
  col.resize(std::size_t(crow.back()));
  std::vector<int64_t> fill(crow.begin(), crow.end() - 1);
  for (int64_t key : keys) {
    const int64_t i = pair_first(key), j = pair_second(key);
    col[std::size_t(fill[std::size_t(i)]++)] = j;
    if (i != j) col[std::size_t(fill[std::size_t(j)]++)] = i;
  }
  for (int64_t i = 0; i < n; ++i) {
    std::sort(col.begin() + crow[std::size_t(i)], col.begin() + crow[std::size_t(i) + 1]);
  }
  return SparsityPattern(n, n, std::move(crow), std::move(col));
}

void require_sparse_input(const Tensor& x, std::string_view op, bool hessian) {
  if (!x.defined()) fail<ValueError>(op, "x is an undefined tensor (default-constructed)");
  require_float_leaf(x.dtype(), op);
  if (x.ndim() != 1) {
    fail<ShapeError>(op, "x has shape ", x.shape(),
                     "; the sparse derivatives take a 1-D x (their matrices index its elements): "
                     "pass st::reshape(x, {-1}) and reshape it back inside f");
  }
  if (hessian && x.numel() >= (int64_t{1} << 31)) {
    fail<ValueError>(op, "x has ", x.numel(), " elements; Hessian patterns support up to 2^31 - 1");
  }
}

namespace {
std::string_view mode_name(SparsePlan::Mode mode) {
  switch (mode) {
    case SparsePlan::Mode::jacfwd:
      return "st::sparse_jacfwd_plan / SparsePlan::jacfwd";
    case SparsePlan::Mode::jacrev:
      return "st::sparse_jacrev_plan / SparsePlan::jacrev";
    case SparsePlan::Mode::hessian:
      return "st::sparse_hessian_plan / SparsePlan::hessian";
  }
  return "";
}
}  // namespace

int64_t require_plan(const Tensor& x, const SparsePlan& plan, SparsePlan::Mode mode,
                     std::string_view op) {
  require_sparse_input(x, op, mode == SparsePlan::Mode::hessian);
  const int64_t n = x.numel();
  if (plan.mode() != mode) {
    fail<ValueError>(op, "the plan was made by ", mode_name(plan.mode()), "; ", op,
                     " needs one made by ", mode_name(mode));
  }
  if (plan.pattern().cols() != n) {
    fail<ValueError>(op, "the plan is for ", plan.pattern().cols(), " inputs, x has ", n,
                     " elements: make a plan for this x");
  }
  return plan.colours();
}

SparseMatrix no_entries(const SparsePlan& plan, const Tensor& x) {
  return SparseMatrix(plan.shared_pattern(), zeros({0}, x.dtype(), x.device()));
}

void require_rows(const SparsePlan& plan, int64_t m, std::string_view op) {
  if (plan.pattern().rows() != m) {
    fail<ShapeError>(op, "f's output has ", m, " elements, the plan's pattern ",
                     plan.pattern().rows(), " rows: make a plan for this function");
  }
}

SparseMatrix decompress(const SparsePlan& plan, const Tensor& compressed) {
  const Tensor flat = reshape(compressed, {-1});
  const Tensor at = plan.recovery_positions().to(flat.device());
  return SparseMatrix(plan.shared_pattern(), Prims<Tensor>::index_select(flat, 0, at));
}

}  // namespace strata::detail
