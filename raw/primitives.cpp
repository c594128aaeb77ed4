// SPDX-License-Identifier: MIT
#include "raw/primitives.hpp"

namespace strata {

std::string_view op_name(UnaryOp op) {
  constexpr std::string_view names[] = {"neg",  "exp",  "log", "sin",  "cos",
                                        "sqrt", "tanh", "abs", "sign", "logical_not"};
  return names[static_cast<int>(op)];
}

std::string_view op_name(BinaryOp op) {
  constexpr std::string_view names[] = {"add",     "sub",     "mul", "div",         "pow",
                                        "maximum", "minimum", "eq",  "ne",          "lt",
                                        "le",      "gt",      "ge",  "logical_and", "logical_or"};
  return names[static_cast<int>(op)];
}

std::string_view op_name(ReduceOp op) {
  constexpr std::string_view names[] = {"sum", "max", "min", "argmax", "argmin"};
  return names[static_cast<int>(op)];
}

}  // namespace strata
