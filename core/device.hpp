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

/// The device that creation functions (st::zeros, st::from_vector, raw::empty, ...) use when
/// not given one: the CPU, unless a DefaultDevice guard on the calling thread says otherwise
/// (like torch.set_default_device and jax.default_device). Ops on tensors never consult it:
/// `x + 1.0` stays on x's device.
Device default_device();

/// Sets the default device of the calling thread for the guard's lifetime and restores the
/// previous one when it goes out of scope (also during unwinding); guards nest. Other threads
/// are unaffected. Whether the device exists is checked when a tensor is first made on it.
/// Example: `{ st::DefaultDevice on(st::Device::cuda(0)); auto x = st::zeros({2}); }`.
class DefaultDevice {
 public:
  /// Makes `device` this thread's default until the guard is destroyed.
  explicit DefaultDevice(Device device);
  /// Restores the default that was in force when the guard was made.
  ~DefaultDevice();
  /// Not copyable or movable: a guard restores exactly once, where it was made.
  DefaultDevice(const DefaultDevice&) = delete;
  /// Not assignable.
  DefaultDevice& operator=(const DefaultDevice&) = delete;

 private:
  Device previous_;
};

/// "cpu" or "cuda:N".
std::string to_string(Device d);
/// Prints to_string(d): `std::cout << x.device()` shows "cpu" or "cuda:0".
std::ostream& operator<<(std::ostream& os, Device d);

}  // namespace strata
