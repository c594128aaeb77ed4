// SPDX-License-Identifier: MIT
// libFuzzer target: st::load_safetensors_metadata (nn/safetensors.cpp) on
// arbitrary bytes. Every st::Error is an expected outcome; any other
// exception, a crash or a sanitizer report is a finding. Metadata that loads
// must have come from the header: its text is no longer than the file.
#include <cstdint>
#include <strata.hpp>

#include "tests/fuzz/memory_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace st = strata;
  static strata_fuzz::MemoryFile file;
  const std::string& path = file.write(data, size);
  std::map<std::string, std::string> metadata;
  try {
    metadata = st::load_safetensors_metadata(path);
  } catch (const st::Error&) {
    return 0;
  }
  std::size_t text = 0;
  for (const auto& [k, v] : metadata) text += k.size() + v.size();
  if (text > size) __builtin_trap();
  return 0;
}
