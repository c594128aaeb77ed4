// SPDX-License-Identifier: MIT
// strata's GradBench tool: one long-running process that speaks GradBench's protocol
// (github.com/gradbench/gradbench, CONTRIBUTING.md "Protocol"): one JSON message per
// line on stdin, one JSON response per line on stdout, matched by "id".
//
//   start     -> {"id", "tool": "strata"}
//   define    -> {"id", "success"} (false, with "error", for an eval strata lacks)
//   evaluate  -> {"id", "success", "output", "timings": [{"name": "evaluate",
//                "nanoseconds"}, ...]}: the function runs at least min_runs times and
//                until min_seconds have passed, one timing per run, as GradBench's C++
//                tools do (cpp/gradbench/main.hpp); parsing the input into tensors is
//                timed separately as "prepare"
//   analysis  -> {"id"} (the eval's verdict on an earlier output; nothing to do)
//
// Like GradBench's tools it runs on one thread unless given --multithreaded.
#include <chrono>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

Registry registry() {
  Registry r;
  register_hello(r);
  register_lse(r);
  register_llsq(r);
  register_ode(r);
  register_det(r);
  register_gmm(r);
  register_kmeans(r);
  register_lstm(r);
  register_ba(r);
  register_ht(r);
  register_particle(r);
  register_saddle(r);
  return r;
}

int64_t nanoseconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
      .count();
}

Json evaluate(const Registry& r, const Json& message) {
  const std::string module = message.at("module"), function = message.at("function");
  const auto m = r.find(module);
  if (m == r.end()) throw std::runtime_error("strata does not implement the eval " + module);
  const auto f = m->second.find(function);
  if (f == m->second.end()) {
    throw std::runtime_error("strata's " + module + " has no function " + function);
  }
  const Json& input = message.at("input");
  const bool runs = input.is_object();  // hello's inputs are bare numbers, run once
  const int64_t min_runs = runs ? input.value("min_runs", int64_t{1}) : 1;
  const double min_seconds = runs ? input.value("min_seconds", 0.0) : 0.0;

  Json timings = Json::array();
  const auto t_prepare = std::chrono::steady_clock::now();
  Prepared p = f->second(input);
  timings.push_back({{"name", "prepare"}, {"nanoseconds", nanoseconds_since(t_prepare)}});
  double elapsed = 0;
  for (int64_t i = 0; i < min_runs || elapsed < min_seconds; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    p.run();
    const int64_t ns = nanoseconds_since(t0);
    timings.push_back({{"name", "evaluate"}, {"nanoseconds", ns}});
    elapsed += double(ns) / 1e9;
  }
  return {{"success", true}, {"output", p.output()}, {"timings", timings}};
}

}  // namespace
}  // namespace gradbench

int main(int argc, char** argv) {
  namespace st = strata;
  using gradbench::Json;
  bool multithreaded = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--multithreaded") {
      multithreaded = true;
    } else {
      std::cerr << "usage: " << argv[0] << " [--multithreaded]\n";
      return 2;
    }
  }
  if (!multithreaded) st::set_num_threads(1);
  const gradbench::Registry registry = gradbench::registry();

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    const Json message = Json::parse(line);
    Json response = {{"id", message.at("id")}};
    const std::string kind = message.at("kind");
    if (kind == "start") {
      response["tool"] = "strata";
    } else if (kind == "define") {
      const std::string module = message.at("module");
      const bool known = registry.count(module) > 0;
      response["success"] = known;
      if (!known) response["error"] = "strata does not implement the eval " + module;
    } else if (kind == "evaluate") {
      try {
        response.update(gradbench::evaluate(registry, message));
      } catch (const std::exception& e) {
        response["success"] = false;
        response["error"] = e.what();
      }
    }
    std::cout << response.dump() << '\n' << std::flush;
  }
  return 0;
}
