// SPDX-License-Identifier: MIT
#pragma once
/// How `std::cout << x` writes a tensor (raw/print.cpp), settable like
/// numpy.set_printoptions / torch.set_printoptions:
///   st::set_print_options({.precision = 2, .threshold = 100});
#include <cstdint>

namespace strata {

/// The settings of tensor printing.
struct PrintOptions {
  /// Digits after the point of a float in fixed or scientific notation.
  int precision = 4;
  /// A tensor of more elements than this is abridged: each axis longer than
  /// 2 * edgeitems shows its first and last edgeitems entries around "...".
  int64_t threshold = 1000;
  /// The entries shown at each end of an abridged axis.
  int64_t edgeitems = 3;
};

/// Sets the options for every later print, in every thread. Throws ValueError
/// (naming set_print_options) for a precision outside [0, 30], a negative
/// threshold or an edgeitems below 1.
void set_print_options(const PrintOptions& options);
/// The options in use (the defaults until set_print_options is called).
PrintOptions print_options();

}  // namespace strata
