// SPDX-License-Identifier: MIT
#include "core/device.hpp"

#include <ostream>

namespace strata {

std::string to_string(Device d) {
  return d.is_cpu() ? std::string("cpu") : "cuda:" + std::to_string(d.index());
}

std::ostream& operator<<(std::ostream& os, Device d) { return os << to_string(d); }

}  // namespace strata
