// SPDX-License-Identifier: MIT
// The elementwise primitives on blocks (raw/cpu/blocks.hpp): the eager kernels' functors and
// vmath kernels, applied to one block of dense or single-value operands.
#include "raw/cpu/blocks.hpp"

#include <algorithm>
#include <type_traits>

#include "core/error.hpp"
#include "raw/cpu/map.hpp"
#include "raw/cpu/row_reduce.hpp"
#include "raw/cpu/vmath_of.hpp"
#include "raw/scalar_ops.hpp"

namespace strata::detail {
namespace {

template <class T>
void unary_typed(UnaryOp op, const T* x, int64_t sx, T* o, int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    const vmath::Kernels* k = vmath::best();
    if (const int fn = vmath_fn(op); k && fn >= 0) {
      void (*kernel)(const T*, T*, int64_t) = nullptr;
      if constexpr (std::is_same_v<T, float>) kernel = k->f32[fn];
      if constexpr (std::is_same_v<T, double>) kernel = k->f64[fn];
      kernel(x, o, sx == 1 ? n : 1);
      if (sx == 0) std::fill(o + 1, o + n, o[0]);
      return;
    }
  }
  scalar::visit_unary<T>(op, [&](auto f) { map_block<T, T>(f, o, 1, n, std::pair{x, sx}); });
}

template <class T>
void binary_typed(BinaryOp op, const T* a, int64_t sa, const T* b, int64_t sb, void* out,
                  int64_t n) {
  if constexpr (std::is_floating_point_v<T>) {
    // The eager kernel's path (safe_binary_fast): the plain IEEE op by vmath's product kernel,
    // then the NaN-safe functor where that gave NaN.
    auto safe = [&](auto plain, auto fixed, auto product) {
      T* o = static_cast<T*>(out);
      bool finite;
      if (product) {
        finite = product(a, sa, b, sb, o, n);
      } else {
        map_block<T, T, T>(plain, o, 1, n, std::pair{a, sa}, std::pair{b, sb});
        finite = false;
      }
      if (!finite) {
        map_block<T, T, T, T>(NanFixup<decltype(fixed)>{fixed}, o, 1, n,
                              std::pair<const T*, int64_t>{o, 1}, std::pair{a, sa},
                              std::pair{b, sb});
      }
    };
    const vmath::Kernels* k = vmath::best();
    bool (*mul)(const T*, int64_t, const T*, int64_t, T*, int64_t) = nullptr;
    bool (*div)(const T*, int64_t, const T*, int64_t, T*, int64_t) = nullptr;
    if constexpr (std::is_same_v<T, float>) {
      if (k) mul = k->mul_f32, div = k->div_f32;
    } else {
      if (k) mul = k->mul_f64, div = k->div_f64;
    }
    if (op == BinaryOp::safe_mul) return safe(scalar::Mul{}, scalar::SafeMul{}, mul);
    if (op == BinaryOp::safe_div) return safe(scalar::Div{}, scalar::SafeDiv{}, div);
    // The plain ops at the instruction set's width: a block sits in L1, so unlike the eager
    // kernel's memory-bound loop, the width is the speed (map_block is compiled for SSE2). A
    // block where two NaNs meet falls through to the eager kernel's code (vmath.hpp), which
    // needs the operands intact: not when the result overwrites one of them.
    const bool apart = out != static_cast<const void*>(a) && out != static_cast<const void*>(b);
    if (const int fn = vmath_binary_fn(op); k && fn >= 0 && sa <= 1 && sb <= 1 && apart) {
      bool (*kernel)(const T*, int64_t, const T*, int64_t, T*, int64_t) = nullptr;
      if constexpr (std::is_same_v<T, float>) kernel = k->binary_f32[fn];
      if constexpr (std::is_same_v<T, double>) kernel = k->binary_f64[fn];
      if (kernel && kernel(a, sa, b, sb, static_cast<T*>(out), n)) return;
    }
  }
  scalar::visit_binary<T>(op, [&](auto f) {
    using Out = decltype(f(T{}, T{}));  // bool for the comparisons
    map_block<Out, T, T>(f, static_cast<Out*>(out), 1, n, std::pair{a, sa}, std::pair{b, sb});
  });
}

}  // namespace

void unary_block(UnaryOp op, DType dtype, const void* x, int64_t sx, void* out, int64_t n) {
  visit_dtype(dtype, op_name(op), [&]<class T>(type_tag<T>) {
    unary_typed<T>(op, static_cast<const T*>(x), sx, static_cast<T*>(out), n);
  });
}

void binary_block(BinaryOp op, DType dtype, const void* a, int64_t sa, const void* b, int64_t sb,
                  void* out, int64_t n) {
  visit_dtype(dtype, op_name(op), [&]<class T>(type_tag<T>) {
    binary_typed<T>(op, static_cast<const T*>(a), sa, static_cast<const T*>(b), sb, out, n);
  });
}

void cast_block(DType from, DType to, const void* x, int64_t sx, void* out, int64_t n) {
  visit_dtype(to, "cast", [&]<class TO>(type_tag<TO>) {
    visit_dtype(from, "cast", [&]<class TI>(type_tag<TI>) {
      map_block<TO, TI>(ConvertTo<TO>{}, static_cast<TO*>(out), 1, n,
                        std::pair{static_cast<const TI*>(x), sx});
    });
  });
}

void where_block(DType dtype, const void* c, int64_t sc, const void* a, int64_t sa, const void* b,
                 int64_t sb, void* out, int64_t n) {
  visit_dtype(dtype, "where", [&]<class T>(type_tag<T>) {
    const std::pair x{static_cast<const T*>(a), sa}, y{static_cast<const T*>(b), sb};
    if constexpr (std::is_same_v<T, bool>) {
      map_block<bool, bool, bool, bool>(BoolSelect{}, static_cast<bool*>(out), 1, n,
                                        std::pair{static_cast<const bool*>(c), sc}, x, y);
    } else {
      // The condition read as bytes, as the eager kernel reads it (MaskSelect).
      map_block<T, uint8_t, T, T>(MaskSelect<T>{}, static_cast<T*>(out), 1, n,
                                  std::pair{static_cast<const uint8_t*>(c), sc}, x, y);
    }
  });
}

bool row_reduction_fuses(ReduceOp op, DType dtype, int64_t row) {
  if (row < 1 || (dtype != DType::f32 && dtype != DType::f64)) return false;
  if (op == ReduceOp::sum) return true;
  return (op == ReduceOp::max || op == ReduceOp::min) && row <= vmath::kSumBlock;
}

namespace {

/// Calls f(type_tag<float>) or f(type_tag<double>) for a floating dtype.
template <class F>
void visit_float(DType dtype, F&& f) {
  if (dtype == DType::f32) return f(type_tag<float>{});
  if (dtype != DType::f64) fail<DTypeError>("reduce", "a fused row reduction of ", dtype);
  f(type_tag<double>{});
}

}  // namespace

void reduce_rows_block(ReduceOp op, DType dtype, const void* x, int64_t row, int64_t rows,
                       void* out) {
  visit_float(dtype, [&]<class T>(type_tag<T>) {
    const T* v = static_cast<const T*>(x);
    T* o = static_cast<T*>(out);
    for (int64_t r = 0; r < rows; ++r, v += row) {
      // The eager reduction's row kernels (reduce.cpp: fast_sum, fast_extreme).
      o[r] = op == ReduceOp::sum   ? T(vmath::sum(v, row))
             : op == ReduceOp::max ? row_extreme<false>(v, row)
                                   : row_extreme<true>(v, row);
    }
  });
}

double sum_piece(DType dtype, const void* x, int64_t n) {
  double s = 0;
  visit_float(dtype, [&]<class T>(type_tag<T>) { s = vmath::sum(static_cast<const T*>(x), n); });
  return s;
}

void store_row_sum(DType dtype, const double* pieces, int64_t count, void* out, int64_t index) {
  visit_float(dtype, [&]<class T>(type_tag<T>) {
    static_cast<T*>(out)[index] = T(sum_of_pieces(pieces, count));
  });
}

}  // namespace strata::detail
