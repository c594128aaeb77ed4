// SPDX-License-Identifier: MIT
#pragma once
// strata's GradBench tool: what the protocol loop (strata_tool.cpp) and the evals
// (eval_*.cpp) share. Each eval registers its functions; a function parses an
// `evaluate` message's input into tensors (not timed) and returns the work GradBench
// times, `run`, and the conversion of its last result to the eval's JSON, `output`.
#include <nlohmann/json.hpp>
#include <strata.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace gradbench {

namespace st = strata;
using Json = nlohmann::json;

/// One evaluation, ready to run: `run` is what the tool times (GradBench's "evaluate"),
/// `output` turns the result of the last run into the eval's output JSON.
struct Prepared {
  std::function<void()> run;
  std::function<Json()> output;
};

/// A function of an eval module: from the input JSON to a prepared evaluation.
using Function = std::function<Prepared(const Json& input)>;
/// An eval module: its functions by name.
using Module = std::map<std::string, Function>;
/// Every module the tool implements, by name.
using Registry = std::map<std::string, Module>;

// One registration per eval file.
void register_hello(Registry& r);
void register_lse(Registry& r);
void register_llsq(Registry& r);
void register_ode(Registry& r);
void register_det(Registry& r);
void register_gmm(Registry& r);
void register_kmeans(Registry& r);
void register_lstm(Registry& r);
void register_ba(Registry& r);
void register_ht(Registry& r);
void register_particle(Registry& r);
void register_saddle(Registry& r);

// --- JSON <-> tensors (f64, on the CPU) ----------------------------------------------
/// A JSON list of numbers as a [n] f64 tensor.
inline st::Tensor vec(const Json& j) { return st::from_vector(j.get<std::vector<double>>()); }

/// A JSON list of equally long lists of numbers as a [rows, cols] f64 tensor.
inline st::Tensor mat(const Json& j) {
  std::vector<double> flat;
  const int64_t rows = int64_t(j.size());
  const int64_t cols = rows == 0 ? 0 : int64_t(j[0].size());
  flat.reserve(std::size_t(rows * cols));
  for (const Json& row : j) {
    for (const Json& x : row) flat.push_back(x.get<double>());
  }
  return st::from_vector(flat, {rows, cols});
}

/// A tensor as nested JSON lists following its shape (a number for a 0-d tensor).
inline Json to_json(const st::Tensor& t) {
  const std::vector<double> v = t.to_vector<double>();
  if (t.ndim() == 0) return v[0];
  std::function<Json(int64_t, std::size_t&)> build = [&](int64_t axis, std::size_t& at) {
    Json out = Json::array();
    const int64_t n = t.shape()[std::size_t(axis)];
    for (int64_t i = 0; i < n; ++i) {
      out.push_back(axis + 1 == t.ndim() ? Json(v[at++]) : build(axis + 1, at));
    }
    return out;
  };
  std::size_t at = 0;
  return build(0, at);
}

/// The C++ number a 0-d or one-element tensor holds.
inline double number(const st::Tensor& t) { return t.item<double>(); }

/// Prepares a jitted function: traces it on args and replays it once. The trace runs eagerly,
/// so the first replay still allocates the plan's own buffer sizes (twice a steady call on
/// ba's largest inputs); timing then starts at the steady state, as a JAX tool's preparation
/// compiles and runs its function.
template <class F, class... A>
void warm(F& f, const A&... args) {
  (void)f(args...);
  (void)f(args...);
}

}  // namespace gradbench
