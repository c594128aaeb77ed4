// SPDX-License-Identifier: MIT
#include "support/device.hpp"

#include <charconv>

namespace strata::testing {

namespace {
Device the_test_device = Device::cpu();
}  // namespace

Device test_device() { return the_test_device; }

void set_test_device(Device device) { the_test_device = device; }

std::optional<Device> parse_device(std::string_view text) {
  if (text == "cpu") return Device::cpu();
  if (text == "cuda") return Device::cuda(0);
  constexpr std::string_view prefix = "cuda:";
  if (text.substr(0, prefix.size()) != prefix) return std::nullopt;
  const std::string_view digits = text.substr(prefix.size());
  int index = -1;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index < 0) {
    return std::nullopt;
  }
  return Device::cuda(index);
}

}  // namespace strata::testing
