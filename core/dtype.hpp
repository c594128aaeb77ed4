// SPDX-License-Identifier: MIT
#pragma once
/// Element types, their promotion order, and dispatch from a runtime dtype to
/// typed code that instantiates only the types a lambda accepts.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <string_view>
#include <type_traits>

#include "core/error.hpp"

namespace strata {

/// The element types, in promotion order (bool < i32 < i64 < f32 < f64).
/// Spelled st::bool_, st::i32, st::i64, st::f32 (the default), st::f64.
enum class DType : uint8_t {
  b8,   ///< bool, one byte (st::bool_)
  i32,  ///< int32_t
  i64,  ///< int64_t (indices, arange)
  f32,  ///< float (the default of every factory)
  f64   ///< double
};
/// The bool dtype: `st::zeros({3}, st::bool_)`.
inline constexpr DType bool_ = DType::b8;
/// The int32_t dtype.
inline constexpr DType i32 = DType::i32;
/// The int64_t dtype (what st::arange and index results use).
inline constexpr DType i64 = DType::i64;
/// The float dtype, the default of every factory.
inline constexpr DType f32 = DType::f32;
/// The double dtype: `st::ones({2, 2}, st::f64)`.
inline constexpr DType f64 = DType::f64;

/// "f32", "i64", "bool", ...
std::string_view dtype_name(DType t);
/// Prints dtype_name(t).
std::ostream& operator<<(std::ostream& os, DType t);
/// Bytes per element: 1, 4, 8, 4, 8.
std::size_t dtype_size(DType t);
/// True for f32 and f64.
constexpr bool is_floating(DType t) { return t == DType::f32 || t == DType::f64; }
/// True for i32 and i64 (not bool).
constexpr bool is_integral(DType t) { return t == DType::i32 || t == DType::i64; }
/// PyTorch-style promotion of two tensor dtypes: the later one in the order wins.
constexpr DType promote_types(DType a, DType b) { return a < b ? b : a; }

/// The dtype of the C++ element type T: `st::dtype_of<float>::value == st::f32`.
template <class T>
struct dtype_of;
/// bool is DType::b8.
template <>
struct dtype_of<bool> {
  static constexpr DType value = DType::b8;  ///< DType::b8
};
/// int32_t is DType::i32.
template <>
struct dtype_of<int32_t> {
  static constexpr DType value = DType::i32;  ///< DType::i32
};
/// int64_t is DType::i64.
template <>
struct dtype_of<int64_t> {
  static constexpr DType value = DType::i64;  ///< DType::i64
};
/// float is DType::f32.
template <>
struct dtype_of<float> {
  static constexpr DType value = DType::f32;  ///< DType::f32
};
/// double is DType::f64.
template <>
struct dtype_of<double> {
  static constexpr DType value = DType::f64;  ///< DType::f64
};
/// dtype_of<T>::value: `st::dtype_v<double> == st::f64`.
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

/// Element types strata stores.
template <class T>
concept Element = std::same_as<T, bool> || std::same_as<T, int32_t> || std::same_as<T, int64_t> ||
    std::same_as<T, float> || std::same_as<T, double>;

/// Passed to visit_dtype callbacks so a lambda can name (and constrain) the type.
template <class T>
struct type_tag {
  using type = T;  ///< the element type
};

namespace detail {
template <class F, class T, class... Ts>
constexpr auto first_visit_result() {
  if constexpr (std::is_invocable_v<F, type_tag<T>>) {
    return std::type_identity<std::invoke_result_t<F, type_tag<T>>>{};
  } else if constexpr (sizeof...(Ts) > 0) {
    return first_visit_result<F, Ts...>();
  } else {
    return std::type_identity<void>{};
  }
}
}  // namespace detail

/// Calls f(type_tag<T>{}) for the C++ type of `t`. Only the types f accepts
/// (its constraints) are instantiated; any other dtype throws DTypeError
/// naming `op`, e.g. `visit_dtype(t, "exp", []<std::floating_point T>(type_tag<T>) {...})`.
template <class F>
decltype(auto) visit_dtype(DType t, std::string_view op, F&& f) {
  using R = typename decltype(detail::first_visit_result<F&, double, float, int64_t, int32_t,
                                                         bool>())::type;
  auto call = [&]<class T>(type_tag<T> tag) -> R {
    if constexpr (std::is_invocable_v<F&, type_tag<T>>) {
      return f(tag);
    } else {
      detail::fail<DTypeError>(op, "dtype ", dtype_name(dtype_v<T>), " is not supported");
    }
  };
  switch (t) {
    case DType::b8:
      return call(type_tag<bool>{});
    case DType::i32:
      return call(type_tag<int32_t>{});
    case DType::i64:
      return call(type_tag<int64_t>{});
    case DType::f32:
      return call(type_tag<float>{});
    case DType::f64:
      break;
  }
  return call(type_tag<double>{});
}

}  // namespace strata
