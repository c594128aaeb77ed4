// SPDX-License-Identifier: MIT
// Front end of the factorisations (raw/linalg.hpp): validation, output shapes,
// allocation; then the device's kernel, and its per-element info turned into
// LinAlgErrors that name the batch element.
#include "raw/linalg.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;
namespace {

using detail::fail;

/// a is defined, f32 or f64, of rank >= 2 (what every factorisation reads).
void require_matrices(const RawTensor& a, std::string_view op, std::string_view what = "input") {
  if (!a.defined()) fail<ValueError>(op, what, " is an undefined tensor (default-constructed)");
  if (!is_floating(a.dtype())) {
    fail<DTypeError>(op, "dtype ", dtype_name(a.dtype()), " is not supported (needs f32 or f64)");
  }
  if (a.ndim() < 2) {
    fail<ShapeError>(op, what, " has shape ", a.shape(),
                     ", needs matrices: rank >= 2, [..., rows, cols]");
  }
}

void require_square(const RawTensor& a, std::string_view op) {
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1];
  if (m != n) {
    fail<ShapeError>(op, "input has shape ", a.shape(), ": its matrices are ", m, " x ", n,
                     ", need square ones [..., n, n]");
  }
}

Shape batch_of(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

/// shape with its last two dims replaced (or removed, dims empty).
Shape with_matrix(const Shape& batch, std::initializer_list<int64_t> dims) {
  Shape s = batch;
  for (int64_t d : dims) s.push_back(d);
  return s;
}

/// "input[1, 2]" for flat batch element `flat` of `batch`, seen through the operand's own
/// batch dims (a broadcast dim of size 1 reads as 0; leading dims it lacks are dropped);
/// plain `name` when the operand has no batch dims.
std::string element(std::string_view name, const Shape& batch, const Shape& own, int64_t flat) {
  std::vector<int64_t> idx(batch.size());
  for (std::size_t d = batch.size(); d-- > 0;) {
    idx[d] = flat % batch[d];
    flat /= batch[d];
  }
  std::ostringstream os;
  os << name;
  if (own.empty()) return os.str();
  os << '[';
  const std::size_t lead = batch.size() - own.size();
  for (std::size_t d = 0; d < own.size(); ++d) {
    os << (d ? ", " : "") << (own[d] == 1 ? 0 : idx[lead + d]);
  }
  os << ']';
  return os.str();
}

/// Reads a kernel's info back and throws the LinAlgError of the first failing element: a
/// NaN or an infinity first (its code is negative), then the op's own failure, described by
/// `what(flat, code)`.
void check_info(const RawTensor& info, std::string_view op,
                const std::function<std::string(int64_t, int32_t)>& what) {
  std::vector<int32_t> codes(static_cast<std::size_t>(info.numel()));
  to_host(info, codes.data());
  auto first = std::find_if(codes.begin(), codes.end(), [](int32_t c) { return c < 0; });
  if (first == codes.end()) {
    first = std::find_if(codes.begin(), codes.end(), [](int32_t c) { return c != 0; });
  }
  if (first != codes.end()) fail<LinAlgError>(op, what(first - codes.begin(), *first));
}

/// The message of a NaN or an infinity in `elem`, read in `part` ("" for the whole matrix).
// Where cholesky and eigh look for a NaN: st::linalg hands them (a + a^T) / 2, so a NaN in
// either triangle of the user's matrix lands in the lower one.
constexpr std::string_view kLowerTriangle =
    "lower triangle (the part the factorisation reads; st::linalg's cholesky and eigh read "
    "(a + a^T) / 2, so a NaN in either triangle of a lands there)";

std::string nonfinite(const std::string& elem, std::string_view part) {
  std::string s = elem + " holds a NaN or an infinity";
  if (!part.empty()) s += std::string(" in its ") + std::string(part);
  return s;
}

RawTensor info_for(const Shape& batch, Device device, std::string_view op) {
  return empty(batch, DType::i32, device, op);
}

}  // namespace

static RawTensor cholesky_now(const RawTensor& a) {
  constexpr std::string_view op = "cholesky";
  require_matrices(a, op);
  require_square(a, op);
  RawTensor l = empty(a.shape(), a.dtype(), a.device(), op);
  if (l.numel() == 0) return l;
  const Shape batch = batch_of(a.shape());
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device()).cholesky(l, a, info);
  check_info(info, op, [&](int64_t flat, int32_t code) {
    const std::string elem = element("input", batch, batch, flat);
    if (code < 0) return nonfinite(elem, kLowerTriangle);
    return elem + " is not positive-definite: the leading minor of order " + std::to_string(code) +
           " is not positive";
  });
  return l;
}

static RawTensor triangular_solve_now(const RawTensor& a, const RawTensor& b,
                                      TriangularSolve opts) {
  constexpr std::string_view op = "triangular_solve";
  require_matrices(a, op, "a");
  require_matrices(b, op, "b");
  if (a.device() != b.device()) {
    fail<DeviceError>(op, "a and b are on different devices (", to_string(a.device()), " and ",
                      to_string(b.device()), "); move one with .to(device)");
  }
  if (a.dtype() != b.dtype()) {
    fail<DTypeError>(op, "dtypes ", dtype_name(a.dtype()), " and ", dtype_name(b.dtype()),
                     " differ (cast one first)");
  }
  const int64_t n = a.shape()[a.ndim() - 1];
  if (a.shape()[a.ndim() - 2] != n) {
    fail<ShapeError>(op, "a has shape ", a.shape(), ": its matrices are ", a.shape()[a.ndim() - 2],
                     " x ", n, ", need square ones [..., n, n]");
  }
  const int64_t rows = b.shape()[b.ndim() - 2], cols = b.shape()[b.ndim() - 1];
  if ((opts.left ? rows : cols) != n) {
    fail<ShapeError>(op, "b of shape ", b.shape(), " does not fit a of shape ", a.shape(),
                     opts.left ? " (left: A X = B needs b [..., n, k] with n = "
                               : " (right: X A = B needs b [..., k, n] with n = ",
                     n, ")");
  }
  const Shape batch_a = batch_of(a.shape()), batch_b = batch_of(b.shape());
  const Shape batch = broadcast_shapes(batch_a, batch_b, op);
  RawTensor x = empty(with_matrix(batch, {rows, cols}), a.dtype(), a.device(), op);
  if (x.numel() == 0) return x;
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device())
      .triangular_solve(x, a.expand(with_matrix(batch, {n, n})), b.expand(x.shape()), opts, info);
  check_info(info, op, [&](int64_t flat, int32_t code) {
    if (code == kNonFiniteB)
      return "the right-hand side " + nonfinite(element("b", batch, batch_b, flat), "");
    const std::string elem = element("input", batch, batch_a, flat);
    if (code < 0) {
      return nonfinite(elem, std::string(opts.lower ? "lower" : "upper") + " triangle" +
                                 (opts.unit_diagonal ? " below the diagonal" : "") +
                                 " (the part the op reads)");
    }
    return elem + " is singular: its diagonal element " + std::to_string(code - 1) + " is zero";
  });
  return x;
}

static std::array<RawTensor, 3> lu_now(const RawTensor& a) {
  constexpr std::string_view op = "lu";
  require_matrices(a, op);
  require_square(a, op);
  const Shape batch = batch_of(a.shape());
  const int64_t n = a.shape()[a.ndim() - 1];
  RawTensor factors = empty(a.shape(), a.dtype(), a.device(), op);
  RawTensor pivots = empty(with_matrix(batch, {n}), DType::i64, a.device(), op);
  RawTensor perm = empty(with_matrix(batch, {n}), DType::i64, a.device(), op);
  if (factors.numel() == 0) return {factors, pivots, perm};
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device()).lu(factors, pivots, perm, a, info);
  check_info(info, op, [&](int64_t flat, int32_t) {
    return nonfinite(element("input", batch, batch, flat), "");
  });
  return {factors, pivots, perm};
}

static RawTensor lu_inverse_now(const RawTensor& lu, const RawTensor& perm) {
  constexpr std::string_view op = "lu_inverse";
  require_matrices(lu, op, "lu");
  require_square(lu, op);
  const int64_t n = lu.shape()[lu.ndim() - 1];
  if (!perm.defined()) fail<ValueError>(op, "perm is an undefined tensor (default-constructed)");
  if (perm.dtype() != DType::i64) {
    fail<DTypeError>(op, "perm has dtype ", dtype_name(perm.dtype()),
                     ", needs i64 (the permutation lu returns)");
  }
  if (perm.ndim() < 1 || perm.shape()[perm.ndim() - 1] != n) {
    fail<ShapeError>(op, "perm of shape ", perm.shape(), " does not fit lu of shape ", lu.shape(),
                     " (needs [..., ", n, "])");
  }
  if (perm.device() != lu.device()) {
    fail<DeviceError>(op, "lu and perm are on different devices (", to_string(lu.device()), " and ",
                      to_string(perm.device()), "); move one with .to(device)");
  }
  const Shape batch_lu = batch_of(lu.shape());
  const Shape batch_perm(perm.shape().begin(), perm.shape().end() - 1);
  const Shape batch = broadcast_shapes(batch_lu, batch_perm, op);
  RawTensor x = empty(with_matrix(batch, {n, n}), lu.dtype(), lu.device(), op);
  if (x.numel() == 0) return x;
  const RawTensor info = info_for(batch, lu.device(), op);
  backend_for(lu.device())
      .lu_inverse(x, lu.expand(x.shape()), perm.expand(with_matrix(batch, {n})), info);
  check_info(info, op, [&](int64_t flat, int32_t code) {
    if (code == kBadPermutation) {
      return element("perm", batch, batch_perm, flat) + " is not a permutation of 0.." +
             std::to_string(n - 1);
    }
    const std::string elem = element("lu", batch, batch_lu, flat);
    if (code < 0) return nonfinite(elem, "");
    return elem + " is singular: U's diagonal element " + std::to_string(code - 1) + " is zero";
  });
  return x;
}

static std::array<RawTensor, 2> eigh_now(const RawTensor& a) {
  constexpr std::string_view op = "eigh";
  require_matrices(a, op);
  require_square(a, op);
  const Shape batch = batch_of(a.shape());
  const int64_t n = a.shape()[a.ndim() - 1];
  RawTensor w = empty(with_matrix(batch, {n}), a.dtype(), a.device(), op);
  RawTensor v = empty(a.shape(), a.dtype(), a.device(), op);
  if (v.numel() == 0) return {w, v};
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device()).eigh(w, v, a, info);
  check_info(info, op, [&](int64_t flat, int32_t code) {
    const std::string elem = element("input", batch, batch, flat);
    if (code < 0) return nonfinite(elem, kLowerTriangle);
    return "the eigenvalue algorithm did not converge for " + elem + " (info " +
           std::to_string(code) + ")";
  });
  return {w, v};
}

static std::array<RawTensor, 3> svd_now(const RawTensor& a) {
  constexpr std::string_view op = "svd";
  require_matrices(a, op);
  const Shape batch = batch_of(a.shape());
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  RawTensor u = empty(with_matrix(batch, {m, k}), a.dtype(), a.device(), op);
  RawTensor s = empty(with_matrix(batch, {k}), a.dtype(), a.device(), op);
  RawTensor vh = empty(with_matrix(batch, {k, n}), a.dtype(), a.device(), op);
  if (s.numel() == 0) return {u, s, vh};
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device()).svd(u, s, vh, a, info);
  check_info(info, op, [&](int64_t flat, int32_t code) {
    const std::string elem = element("input", batch, batch, flat);
    if (code < 0) return nonfinite(elem, "");
    return "the SVD algorithm did not converge for " + elem + " (info " + std::to_string(code) +
           ")";
  });
  return {u, s, vh};
}

static std::array<RawTensor, 2> qr_now(const RawTensor& a) {
  constexpr std::string_view op = "qr";
  require_matrices(a, op);
  const Shape batch = batch_of(a.shape());
  const int64_t m = a.shape()[a.ndim() - 2], n = a.shape()[a.ndim() - 1], k = std::min(m, n);
  RawTensor q = empty(with_matrix(batch, {m, k}), a.dtype(), a.device(), op);
  RawTensor r = empty(with_matrix(batch, {k, n}), a.dtype(), a.device(), op);
  if (q.numel() == 0 || r.numel() == 0) return {q, r};
  const RawTensor info = info_for(batch, a.device(), op);
  backend_for(a.device()).qr(q, r, a, info);
  check_info(info, op, [&](int64_t flat, int32_t) {
    return nonfinite(element("input", batch, batch, flat), "");
  });
  return {q, r};
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor cholesky(const RawTensor& a) {
  return trace::call("cholesky", Effect::pure, cholesky_now, a);
}

RawTensor triangular_solve(const RawTensor& a, const RawTensor& b, TriangularSolve opts) {
  return trace::call(
      "triangular_solve", Effect::pure,
      [opts](const RawTensor& a, const RawTensor& b) { return triangular_solve_now(a, b, opts); },
      a, b);
}

std::array<RawTensor, 3> lu(const RawTensor& a) {
  return trace::call("lu", Effect::pure, lu_now, a);
}

RawTensor lu_inverse(const RawTensor& lu, const RawTensor& perm) {
  return trace::call("lu_inverse", Effect::pure, lu_inverse_now, lu, perm);
}

std::array<RawTensor, 2> eigh(const RawTensor& a) {
  return trace::call("eigh", Effect::pure, eigh_now, a);
}

std::array<RawTensor, 3> svd(const RawTensor& a) {
  return trace::call("svd", Effect::pure, svd_now, a);
}

std::array<RawTensor, 2> qr(const RawTensor& a) {
  return trace::call("qr", Effect::pure, qr_now, a);
}

}  // namespace strata::raw
