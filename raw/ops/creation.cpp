// SPDX-License-Identifier: MIT
// The creation primitives and the copies between host and device: validation,
// allocation, then the device backend's fill, arange, random or transfer.
#include "raw/ops.hpp"

#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "raw/backend.hpp"
#include "raw/ops/checks.hpp"
#include "raw/trace.hpp"

namespace strata::raw {

using trace::Effect;

using detail::fail;
using detail::full_for;
using detail::require_defined;
using detail::require_float;

static RawTensor empty_now(const Shape& shape, DType dtype, Device device, std::string_view op) {
  const std::size_t bytes = detail::checked_bytes(shape, dtype, op);
  Backend& be = backend_for(device);
  std::shared_ptr<Storage> storage;
  try {
    storage = make_storage(be.allocator(), bytes);
  } catch (const ValueError& e) {
    // The allocator's own message ("allocate: ...") under the op that asked.
    fail<ValueError>(op, "cannot allocate shape ", shape, " (", dtype_name(dtype), ", ", bytes,
                     " bytes): ", e.what());
  }
  return RawTensor(std::move(storage), Layout::contiguous(shape), dtype);
}

static RawTensor full_now(const Shape& shape, double value, DType dtype, Device device) {
  return full_for(shape, value, dtype, device, "full");
}

static RawTensor from_host_now(const void* data, const Shape& shape, DType dtype, Device device) {
  RawTensor out = empty(shape, dtype, device, "from_host");
  if (out.numel() > 0) {
    if (!data) fail<ValueError>("from_host", "null data pointer for shape ", shape);
    backend_for(device).from_host(out, data);
  }
  return out;
}

static RawTensor arange_now(double start, double stop, double step, DType dtype, Device device) {
  if (step == 0 || !std::isfinite(step) || !std::isfinite(start) || !std::isfinite(stop)) {
    fail<ValueError>("arange", "start, stop and step must be finite and step nonzero (got ", start,
                     ", ", stop, ", ", step, ")");
  }
  const double count = std::ceil((stop - start) / step);
  if (count > 9.0e18) fail<ValueError>("arange", "element count ", count, " overflows int64");
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  // Rounding in (stop - start) / step can admit one element at or past stop; drop it.
  while (n > 0 &&
         (step > 0 ? start + double(n - 1) * step >= stop : start + double(n - 1) * step <= stop)) {
    --n;
  }
  RawTensor out = empty({n}, dtype, device, "arange");
  if (n > 0) backend_for(device).arange(out, start, step);
  return out;
}

static RawTensor random(const Shape& shape, uint64_t seed, DType dtype, Device device,
                        RandomKind kind, std::string_view op) {
  require_float(dtype, op);
  RawTensor out = empty(shape, dtype, device, op);
  if (out.numel() > 0) backend_for(device).random(out, kind, seed);
  return out;
}

static RawTensor uniform_now(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return random(shape, seed, dtype, device, RandomKind::uniform, "uniform");
}

static RawTensor normal_now(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return random(shape, seed, dtype, device, RandomKind::normal, "normal");
}

static void to_host_now(const RawTensor& x, void* dst) {
  require_defined(x, "to_host");
  if (x.numel() == 0) return;
  if (!dst) fail<ValueError>("to_host", "null destination pointer");
  backend_for(x.device()).to_host(x, dst);
}

static RawTensor to_device_now(const RawTensor& x, Device device) {
  require_defined(x, "to_device");
  if (x.device() == device) return x;
  RawTensor out = empty(x.shape(), x.dtype(), device, "to_device");
  if (x.numel() == 0) return out;
  // Through host memory: correct for every pair of devices.
  std::vector<char> host(static_cast<std::size_t>(x.numel()) * dtype_size(x.dtype()));
  backend_for(x.device()).to_host(x, host.data());
  backend_for(device).from_host(out, host.data());
  return out;
}

// --- the public primitives: each recorded when a jit trace records (raw/trace.hpp) ---

RawTensor empty(const Shape& shape, DType dtype, Device device, std::string_view op) {
  // Every primitive's result comes from here: no copy of the name unless it is recorded.
  if (!trace::recording()) return empty_now(shape, dtype, device, op);
  return trace::call(op, Effect::pure, [shape, dtype, device, op = std::string(op)] {
    return empty_now(shape, dtype, device, op);
  });
}

RawTensor full(const Shape& shape, double value, DType dtype, Device device) {
  return trace::call("full", Effect::pure, [shape, value, dtype, device] {
    return full_now(shape, value, dtype, device);
  });
}

RawTensor from_host(const void* data, const Shape& shape, DType dtype, Device device) {
  if (!trace::recording()) return from_host_now(data, shape, dtype, device);
  // Recorded with its own copy of the bytes: a plan may run it again after data is gone.
  const auto* bytes = static_cast<const char*>(data);
  std::vector<char> copy;
  if (bytes) copy.assign(bytes, bytes + detail::checked_bytes(shape, dtype, "from_host"));
  return trace::call(
      "from_host", Effect::pure, [copy = std::move(copy), data, shape, dtype, device] {
        return from_host_now(copy.empty() ? data : copy.data(), shape, dtype, device);
      });
}

RawTensor arange(double start, double stop, double step, DType dtype, Device device) {
  return trace::call("arange", Effect::pure, [start, stop, step, dtype, device] {
    return arange_now(start, stop, step, dtype, device);
  });
}

RawTensor uniform(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return trace::call("uniform", Effect::pure, [shape, seed, dtype, device] {
    return uniform_now(shape, seed, dtype, device);
  });
}

RawTensor normal(const Shape& shape, uint64_t seed, DType dtype, Device device) {
  return trace::call("normal", Effect::pure, [shape, seed, dtype, device] {
    return normal_now(shape, seed, dtype, device);
  });
}

void to_host(const RawTensor& x, void* dst) {
  trace::check_read("to_host", x);
  to_host_now(x, dst);
}

RawTensor to_device(const RawTensor& x, Device device) {
  return trace::call(
      "to_device", Effect::pure, [device](const RawTensor& x) { return to_device_now(x, device); },
      x);
}

}  // namespace strata::raw
