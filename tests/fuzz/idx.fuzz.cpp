// SPDX-License-Identifier: MIT
// libFuzzer target: st::load_idx (nn/idx.cpp) on arbitrary bytes, plain or gzipped. Every
// st::Error is an expected outcome; any other exception, a crash or a sanitizer report is
// a finding. A file that loads holds at least one byte per element (at most 1032 elements
// per compressed byte, deflate's best ratio), and every element is read back.
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "raw/ops.hpp"
#include "tests/fuzz/memory_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace st = strata;
  static strata_fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  st::Tensor t;
  try {
    t = st::load_idx(path);
  } catch (const st::Error&) {
    return 0;
  }
  std::vector<char> bytes(std::size_t(t.numel()) * st::dtype_size(t.dtype()));
  st::raw::to_host(t.raw(), bytes.data());
  if (uint64_t(t.numel()) > 1032 * uint64_t(size)) __builtin_trap();  // more than the file holds
  return 0;
}
