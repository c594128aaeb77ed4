// SPDX-License-Identifier: MIT
// libFuzzer target: st::load_safetensors (nn/safetensors.cpp) on arbitrary
// bytes. Every st::Error is an expected outcome; any other exception, a crash
// or a sanitizer report is a finding. A file that loads must hold what its
// tensors claim: every element is read back (ASan checks the reads) and the
// byte counts must add up to no more than the file's size.
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "raw/ops.hpp"
#include "tests/fuzz/memory_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace st = strata;
  static strata_fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  std::map<std::string, st::Tensor> tensors;
  try {
    tensors = st::load_safetensors(path);
  } catch (const st::Error&) {
    return 0;
  }
  std::size_t total = 0;
  std::vector<char> bytes;
  for (const auto& [name, t] : tensors) {
    bytes.resize(std::size_t(t.numel()) * st::dtype_size(t.dtype()));
    st::raw::to_host(t.raw(), bytes.data());
    if (t.dtype() == st::bool_) {
      for (char b : bytes) {
        if (b != 0 && b != 1) __builtin_trap();  // the loader promised 0 or 1
      }
    }
    total += bytes.size();
  }
  if (total + 8 > size) __builtin_trap();  // more tensor bytes than the file holds
  return 0;
}
