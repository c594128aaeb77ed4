// SPDX-License-Identifier: MIT
// libFuzzer target: a tensor's JSON form, from_json (nn/json.cpp). The input
// is parsed as JSON (text that is not JSON is nlohmann's business and
// skipped), then converted to a Tensor. Every st::Error is an expected
// outcome; any other exception, a crash or a sanitizer report is a finding.
// A tensor that converts must survive to_json and back bit for bit.
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <strata.hpp>
#include <vector>

#include "nn/json.hpp"
#include "raw/ops.hpp"

namespace {

std::vector<char> bytes_of(const strata::Tensor& t) {
  std::vector<char> b(std::size_t(t.numel()) * strata::dtype_size(t.dtype()));
  strata::raw::to_host(t.raw(), b.data());
  return b;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  namespace st = strata;
  const nlohmann::json j = nlohmann::json::parse(data, data + size, nullptr,
                                                 /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;
  st::Tensor t;
  try {
    t = j.get<st::Tensor>();
  } catch (const st::Error&) {
    return 0;
  }
  const nlohmann::json back = t;
  const st::Tensor u = back.get<st::Tensor>();
  if (u.dtype() != t.dtype() || u.shape() != t.shape() || bytes_of(u) != bytes_of(t)) {
    __builtin_trap();  // to_json and from_json disagree
  }
  return 0;
}
