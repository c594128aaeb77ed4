// SPDX-License-Identifier: MIT
// The sparsity tracer's matrix primitives: matmul, triangular_solve and the factorisations
// (ad/sparse/tracer.hpp has the table of what each propagates). Operands are first
// broadcast to their common batch, so each loop below sees [batch, rows, cols] values.
#include <array>

#include "ad/sparse/tracer_support.hpp"

namespace strata {

using detail::fail;
using detail::SetBuilder;
using detail::Sets;
using namespace detail::sparsity;  // NOLINT: the tracer's shared checks and positions
using T = Prims<Tensor>;

namespace {

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

Shape with_matrix(Shape batch, int64_t rows, int64_t cols) {
  batch.push_back(rows);
  batch.push_back(cols);
  return batch;
}

/// x broadcast to `batch` ++ its matrix dims.
S to_batch(const S& x, const Shape& batch) {
  const Shape s = x.shape();
  const Shape full = with_matrix(batch, s[s.ndim() - 2], s[s.ndim() - 1]);
  return s == full ? x : Prims<S>::expand(x, full);
}

/// For each element of [batch, rows, cols]: its line, b * rows + r (by_row) or b * cols + c.
std::vector<int64_t> line_of_each(int64_t batch, int64_t rows, int64_t cols, bool by_row) {
  std::vector<int64_t> line(static_cast<std::size_t>(batch * rows * cols));
  for (int64_t b = 0, i = 0; b < batch; ++b) {
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c, ++i)
        line[std::size_t(i)] = by_row ? b * rows + r : b * cols + c;
    }
  }
  return line;
}

/// The sets of [batch, rows, cols] reduced to one set per batch element and row (by_row) or
/// column: [batch, rows] or [batch, cols].
Sets lines(const Sets& s, int64_t batch, int64_t rows, int64_t cols, bool by_row) {
  if (!s) return nullptr;
  return detail::reduce(s, line_of_each(batch, rows, cols, by_row), batch * (by_row ? rows : cols));
}

/// out[b, i, j] = the set of lines[b, i] (by_row) or lines[b, j], for out [batch, rows, cols].
Sets spread_lines(const Sets& l, int64_t batch, int64_t rows, int64_t cols, bool by_row) {
  if (!l) return nullptr;
  return detail::gather(l, line_of_each(batch, rows, cols, by_row));
}

/// One set per element out[b, i, j] of a [batch, m, k] x [batch, k, n] product: the keys
/// terms(b, i, j, p, scratch) appends for p = 0 .. k - 1.
template <class Terms>
Sets product_sets(int64_t batch, int64_t m, int64_t k, int64_t n, Terms terms) {
  SetBuilder out;
  std::vector<int64_t> ids(static_cast<std::size_t>(batch * m * n)), scratch;
  for (int64_t b = 0, o = 0; b < batch; ++b) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j, ++o) {
        for (int64_t p = 0; p < k; ++p) terms(b, i, j, p, scratch);
        ids[std::size_t(o)] = out.add(scratch);
      }
    }
  }
  return out.finish(std::move(ids));
}

/// A product with a known matrix w: out[b, i, j] unites s's terms whose factor in w is not
/// zero. w_left: w is [batch, m, k], s [batch, k, n]; else s is [batch, m, k], w [batch, k, n].
Sets known_product(const Sets& s, const std::vector<double>& w, bool w_left, int64_t batch,
                   int64_t m, int64_t k, int64_t n) {
  if (!s) return nullptr;
  return product_sets(batch, m, k, n,
                      [&](int64_t b, int64_t i, int64_t j, int64_t p, std::vector<int64_t>& out) {
                        const int64_t wi = w_left ? (b * m + i) * k + p : (b * k + p) * n + j;
                        if (w[std::size_t(wi)] == 0.0) return;
                        const int64_t si = w_left ? (b * k + p) * n + j : (b * m + i) * k + p;
                        const std::span<const int64_t> set = (*s)[si];
                        out.insert(out.end(), set.begin(), set.end());
                      });
}

/// The pairs a product of two traced matrices adds: out[b, i, j] unites, over p, the pairs of
/// a[b, i, p] with b[b, p, j].
Sets product_pairs(const Sets& a, const Sets& bs, int64_t batch, int64_t m, int64_t k, int64_t n) {
  if (!a || !bs) return nullptr;
  return product_sets(batch, m, k, n,
                      [&](int64_t b, int64_t i, int64_t j, int64_t p, std::vector<int64_t>& out) {
                        for (int64_t u : (*a)[(b * m + i) * k + p]) {
                          for (int64_t v : (*bs)[(b * k + p) * n + j])
                            out.push_back(detail::pair_key(u, v));
                        }
                      });
}

/// DTypeError / ShapeError unless a holds float matrices (square ones when `square`).
void require_matrices(const S& a, std::string_view op, bool square) {
  require_float(a.dtype(), op);
  if (a.ndim() < 2) {
    fail<ShapeError>(op, "input has shape ", a.shape(),
                     ", needs matrices: rank >= 2, [..., rows, cols]");
  }
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1];
  if (square && m != n) {
    fail<ShapeError>(op, "input has shape ", a.shape(), ": its matrices are ", m, " x ", n,
                     ", need square ones [..., n, n]");
  }
}

/// The sets of a factorisation's outputs: every element of a matrix's output depends on
/// every element of that input matrix, nonlinearly.
class Factor {
 public:
  explicit Factor(const S& a) : a_(a) {
    const Shape s = a.shape();
    batch_ = batch_of(s);
    const int64_t m = s[s.ndim() - 2], n = s[s.ndim() - 1];
    const int64_t count = checked_numel(batch_, "factorisation");
    const std::vector<int64_t> of = matrix_of_each(count, m, n);
    deps_ = detail::reduce(a.deps(), of, count);
    if (a.second_order()) {
      pairs_ = detail::unite(detail::reduce(a.pairs(), of, count), detail::pairs_of(deps_, deps_));
    }
  }
  /// A floating output of shape batch ++ dims: each element has its matrix's sets.
  S output(std::initializer_list<int64_t> dims) const {
    Shape shape = batch_;
    int64_t per = 1;
    for (int64_t d : dims) shape.push_back(d), per *= d;
    const int64_t count = checked_numel(batch_, "factorisation");
    const std::vector<int64_t> of = matrix_of_each(count, 1, per);
    return S(shape, a_.dtype(), a_.device(), detail::gather(deps_, of), detail::gather(pairs_, of),
             a_.second_order());
  }
  /// An integer output (LU's pivots and permutation): no sets, no known value.
  S indices(int64_t n) const {
    Shape shape = batch_;
    shape.push_back(n);
    return S(shape, DType::i64, a_.device(), nullptr, nullptr, a_.second_order());
  }

 private:
  const S& a_;
  Shape batch_;
  Sets deps_, pairs_;
};

int64_t rows_of(const S& a) { return a.shape()[a.ndim() - 2]; }
int64_t cols_of(const S& a) { return a.shape()[a.ndim() - 1]; }

}  // namespace

S Prims<S>::matmul(const S& a, const S& b) {
  if (a.known() && b.known()) return S(T::matmul(a.value(), b.value()));
  require_same_device(a, b, "matmul");
  if (a.ndim() < 2 || b.ndim() < 2) {
    fail<ShapeError>("matmul", "operands need rank >= 2, got shapes ", a.shape(), " and ",
                     b.shape(), " (use the composite st::matmul for vectors)");
  }
  require_same_dtype(a, b, "matmul");
  if (a.dtype() == DType::b8)
    fail<DTypeError>("matmul", "dtype bool is not supported (cast to a number)");
  const int64_t m = rows_of(a), k = cols_of(a), k2 = rows_of(b), n = cols_of(b);
  if (k != k2) {
    fail<ShapeError>("matmul", "shapes ", a.shape(), " and ", b.shape(), " do not fit (inner dims ",
                     k, " vs ", k2, ")");
  }
  const Shape batch = broadcast_shapes(batch_of(a.shape()), batch_of(b.shape()), "matmul");
  const int64_t count = checked_numel(batch, "matmul");
  const S ea = to_batch(a, batch), eb = to_batch(b, batch);
  const bool second = a.second_order() || b.second_order();
  const Shape out = with_matrix(batch, m, n);
  if (ea.known() || eb.known()) {
    // Linear in the traced operand; the known one's zeros contribute nothing.
    const S& traced = ea.known() ? eb : ea;
    const std::vector<double> w = (ea.known() ? ea : eb).value().to_vector<double>();
    return S(out, a.dtype(), a.device(),
             known_product(traced.deps(), w, ea.known(), count, m, k, n),
             known_product(traced.pairs(), w, ea.known(), count, m, k, n), second);
  }
  // Every term of out[i, j] is a[i, p] b[p, j]: row i of a and column j of b, exactly.
  const Sets deps =
      detail::unite(spread_lines(lines(ea.deps(), count, m, k, true), count, m, n, true),
                    spread_lines(lines(eb.deps(), count, k, n, false), count, m, n, false));
  Sets pairs;
  if (second) {
    pairs = detail::unite({spread_lines(lines(ea.pairs(), count, m, k, true), count, m, n, true),
                           spread_lines(lines(eb.pairs(), count, k, n, false), count, m, n, false),
                           product_pairs(ea.deps(), eb.deps(), count, m, k, n)});
  }
  return S(out, a.dtype(), a.device(), deps, pairs, second);
}

S Prims<S>::triangular_solve(const S& a, const S& b, TriangularSolve opts) {
  if (a.known() && b.known()) return S(T::triangular_solve(a.value(), b.value(), opts));
  const std::string_view op = "triangular_solve";
  require_same_device(a, b, op);
  require_same_dtype(a, b, op);
  require_matrices(a, op, true);
  const int64_t n = rows_of(a);
  if (b.ndim() < 2 || (opts.left ? rows_of(b) : cols_of(b)) != n) {
    fail<ShapeError>(op, "b of shape ", b.shape(), " does not fit a of shape ", a.shape(),
                     opts.left ? " (needs [..., n, k])" : " (needs [..., k, n])");
  }
  const Shape batch = broadcast_shapes(batch_of(a.shape()), batch_of(b.shape()), op);
  const int64_t count = checked_numel(batch, op), r = rows_of(b), c = cols_of(b);
  const S ea = to_batch(a, batch), eb = to_batch(b, batch);
  // x's column j (left) or row i (right) depends on a's whole matrix and b's column (row).
  const bool left = opts.left;
  const int64_t per = left ? c : r;
  std::vector<int64_t> line_matrix(static_cast<std::size_t>(count * per));
  for (std::size_t i = 0; i < line_matrix.size(); ++i) line_matrix[i] = int64_t(i) / per;
  const Sets a_deps =
      detail::gather(detail::reduce(ea.deps(), matrix_of_each(count, n, n), count), line_matrix);
  const Sets b_deps = lines(eb.deps(), count, r, c, !left);
  const Sets deps = detail::unite(a_deps, b_deps);
  const bool second = a.second_order() || b.second_order();
  Sets pairs;
  if (second) {
    const Sets a_pairs =
        detail::gather(detail::reduce(ea.pairs(), matrix_of_each(count, n, n), count), line_matrix);
    pairs = detail::unite(
        {a_pairs, lines(eb.pairs(), count, r, c, !left), detail::pairs_of(a_deps, deps)});
  }
  const Shape out = with_matrix(batch, r, c);
  return S(out, a.dtype(), a.device(), spread_lines(deps, count, r, c, !left),
           spread_lines(pairs, count, r, c, !left), second);
}

S Prims<S>::cholesky(const S& a) {
  if (a.known()) return S(T::cholesky(a.value()));
  require_matrices(a, "cholesky", true);
  const int64_t n = rows_of(a);
  return Factor(a).output({n, n});
}

std::array<S, 3> Prims<S>::lu(const S& a) {
  if (a.known()) {
    const std::array<Tensor, 3> r = T::lu(a.value());
    return {S(r[0]), S(r[1]), S(r[2])};
  }
  require_matrices(a, "lu", true);
  const int64_t n = rows_of(a);
  const Factor f(a);
  return {f.output({n, n}), f.indices(n), f.indices(n)};
}

// Both depend on all of a's matrix (lu and perm are its factors, without sets of their own).
S Prims<S>::lu_inverse(const S& a, const S& lu, const S& perm) {
  if (a.known() && lu.known() && perm.known()) {
    return S(T::lu_inverse(a.value(), lu.value(), perm.value()));
  }
  require_matrices(a, "lu_inverse", true);
  const int64_t n = rows_of(a);
  return Factor(a).output({n, n});
}

S Prims<S>::logabsdet(const S& a, const S& lu, const S& perm) {
  if (a.known() && lu.known() && perm.known()) {
    return S(T::logabsdet(a.value(), lu.value(), perm.value()));
  }
  require_matrices(a, "logabsdet", true);
  return Factor(a).output({});
}

S Prims<S>::pinv(const S& a, double cutoff) {
  if (a.known()) return S(T::pinv(a.value(), cutoff));
  require_matrices(a, "pinv", false);
  return Factor(a).output({cols_of(a), rows_of(a)});
}

std::array<S, 2> Prims<S>::eigh(const S& a) {
  if (a.known()) {
    const std::array<Tensor, 2> r = T::eigh(a.value());
    return {S(r[0]), S(r[1])};
  }
  require_matrices(a, "eigh", true);
  const int64_t n = rows_of(a);
  const Factor f(a);
  return {f.output({n}), f.output({n, n})};
}

std::array<S, 3> Prims<S>::svd(const S& a) {
  if (a.known()) {
    const std::array<Tensor, 3> r = T::svd(a.value());
    return {S(r[0]), S(r[1]), S(r[2])};
  }
  require_matrices(a, "svd", false);
  const int64_t m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  const Factor f(a);
  return {f.output({m, k}), f.output({k}), f.output({k, n})};
}

std::array<S, 2> Prims<S>::qr(const S& a) {
  if (a.known()) {
    const std::array<Tensor, 2> r = T::qr(a.value());
    return {S(r[0]), S(r[1])};
  }
  require_matrices(a, "qr", false);
  const int64_t m = rows_of(a), n = cols_of(a), k = std::min(m, n);
  const Factor f(a);
  return {f.output({m, k}), f.output({k, n})};
}

}  // namespace strata
