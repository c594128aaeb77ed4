// SPDX-License-Identifier: MIT
#pragma once
/// Where a tensor's storage lives: the CPU or CUDA device N.
#include <cstdint>
#include <iosfwd>
#include <string>

namespace strata {

/// A device: the CPU, or CUDA device N. A small value type; tensors report theirs with
/// device() and move with `x.to(st::Device::cuda(0))`. Example: `st::zeros({2}, st::f32,
/// st::Device::cpu())`.
class Device {
 public:
  /// The kind of device.
  enum class Kind : uint8_t {
    cpu,  ///< the host
    cuda  ///< an NVIDIA GPU through the CUDA backend
  };

  /// The CPU.
  constexpr Device() = default;
  /// The CPU (there is one).
  static constexpr Device cpu() { return Device(Kind::cpu, 0); }
  /// CUDA device `index`; whether it exists is checked when it is first used.
  static constexpr Device cuda(int index = 0) { return Device(Kind::cuda, index); }

  /// CPU or CUDA.
  constexpr Kind kind() const { return kind_; }
  /// The device number (0 for the CPU).
  constexpr int index() const { return index_; }
  /// kind() == Kind::cpu.
  constexpr bool is_cpu() const { return kind_ == Kind::cpu; }
  /// kind() == Kind::cuda.
  constexpr bool is_cuda() const { return kind_ == Kind::cuda; }
  /// Same kind and index.
  friend constexpr bool operator==(Device, Device) = default;

 private:
  constexpr Device(Kind kind, int index) : kind_(kind), index_(index) {}
  Kind kind_ = Kind::cpu;
  int index_ = 0;
};

/// "cpu" or "cuda:N".
std::string to_string(Device d);
/// Prints to_string(d): `std::cout << x.device()` shows "cpu" or "cuda:0".
std::ostream& operator<<(std::ostream& os, Device d);

}  // namespace strata
