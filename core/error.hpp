// SPDX-License-Identifier: MIT
#pragma once
/// The error hierarchy (DESIGN §6). Every user-facing failure is one of these,
/// with a message of the form "op: what is wrong (values)".
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace strata {

/// Base of every error strata throws.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// Shapes that do not fit together: broadcast, reshape, matmul, concat.
struct ShapeError : Error {
  using Error::Error;
};
/// An index or axis out of range.
struct IndexError : Error {
  using Error::Error;
};
/// An element type an operation does not support, or two that do not match.
struct DTypeError : Error {
  using Error::Error;
};
/// A device that does not exist, or tensors on different devices.
struct DeviceError : Error {
  using Error::Error;
};
/// Any other bad argument: a negative size, an overflowing count, a bad file.
struct ValueError : Error {
  using Error::Error;
};
/// Errors of linear algebra (numpy.linalg.LinAlgError): a singular or non-positive-definite
/// matrix, a NaN or infinity in the input, failed convergence. The message names the op, the
/// batch element and the pivot or minor.
struct LinAlgError : Error {
  using Error::Error;
};

namespace detail {

/// Formats "op: part1part2..." by streaming every part; one funnel for all errors.
template <class... Parts>
std::string format_error(std::string_view op, Parts&&... parts) {
  std::ostringstream os;
  os << op << ": ";
  (os << ... << std::forward<Parts>(parts));
  return os.str();
}

/// Throws E with the message "op: parts...".
template <class E, class... Parts>
[[noreturn]] void fail(std::string_view op, Parts&&... parts) {
  throw E(format_error(op, std::forward<Parts>(parts)...));
}

}  // namespace detail
}  // namespace strata
