// SPDX-License-Identifier: MIT
#pragma once
/// Where a tensor's storage lives: the CPU or CUDA device N.
#include <cstdint>
#include <iosfwd>
#include <string>

namespace strata {

class Device {
 public:
  enum class Kind : uint8_t { cpu, cuda };

  constexpr Device() = default;
  static constexpr Device cpu() { return Device(Kind::cpu, 0); }
  /// CUDA device `index`; whether it exists is checked when it is first used.
  static constexpr Device cuda(int index = 0) { return Device(Kind::cuda, index); }

  constexpr Kind kind() const { return kind_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return kind_ == Kind::cpu; }
  constexpr bool is_cuda() const { return kind_ == Kind::cuda; }
  friend constexpr bool operator==(Device, Device) = default;

 private:
  constexpr Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_ = Kind::cpu;
  int index_ = 0;
};

/// "cpu" or "cuda:N".
std::string to_string(Device d);
std::ostream& operator<<(std::ostream& os, Device d);

}  // namespace strata
