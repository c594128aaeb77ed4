// SPDX-License-Identifier: MIT
// The Eigen peer's workloads: inputs built here, the timed bodies in the
// separately compiled bench/peers_eigen.cpp library, loaded for the
// instruction set in use. Plus what the table's header says about the machine.
#include "bench/peers.hpp"

#include <dlfcn.h>

#include <fstream>
#include <random>
#include <stdexcept>

#include "raw/cpu/vmath.hpp"

namespace bench {

std::string isa_in_use() {
  const auto* k = strata::detail::vmath::best();
  return k ? strata::detail::vmath::isa_name(k->isa) : "scalar";
}

std::string cpu_model() {
  // Virtual machines often report a generic name ("AMD EPYC"): family and
  // model number say which generation it is (AMD family 25: Zen 3/4, 26: Zen 5).
  std::ifstream in("/proc/cpuinfo");
  std::string name = "unknown", family, model;
  auto value = [](const std::string& line) {
    const std::size_t colon = line.find(':');
    const std::size_t start =
        colon == std::string::npos ? std::string::npos : line.find_first_not_of(' ', colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  };
  for (std::string line; std::getline(in, line) && line != "";) {
    if (line.rfind("model name", 0) == 0) name = value(line);
    if (line.rfind("cpu family", 0) == 0) family = value(line);
    if (line.rfind("model\t", 0) == 0) model = value(line);
  }
  if (!family.empty()) name += " (family " + family + " model " + model + ")";
  return name;
}

const EigenLib& eigen_lib() {
  static const EigenLib lib = [] {
    EigenLib l;
    l.path = isa_in_use() == "avx2" ? STRATA_BENCH_EIGEN_AVX2 : STRATA_BENCH_EIGEN_NATIVE;
    void* h = dlopen(l.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      l.error = dlerror();
      return l;
    }
    auto sym = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (!fn) l.error = std::string("no ") + name + " in " + l.path;
    };
    sym(l.sgemm, "peer_eigen_sgemm");
    sym(l.exp, "peer_eigen_exp");
    sym(l.add, "peer_eigen_add");
    sym(l.sum, "peer_eigen_sum");
    sym(l.mlp_new, "peer_eigen_mlp_new");
    sym(l.mlp_free, "peer_eigen_mlp_free");
    sym(l.mlp_step, "peer_eigen_mlp_step");
    sym(l.hessian_tanh, "peer_eigen_hessian_tanh");
    sym(l.cholesky, "peer_eigen_cholesky");
    sym(l.solve, "peer_eigen_solve");
    sym(l.eigh, "peer_eigen_eigh");
    return l;
  }();
  if (!lib.error.empty()) throw std::runtime_error("eigen peer: " + lib.error);
  return lib;
}

std::shared_ptr<std::vector<float>> host_normal(int64_t n, uint64_t seed) {
  auto v = std::make_shared<std::vector<float>>(std::size_t(n));
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> d;
  for (float& x : *v) x = d(rng);
  return v;
}

Peer eigen_matmul(int64_t n, bool bt) {
  return {"eigen", [=]() -> Body {
            auto f = eigen_lib().sgemm;
            auto a = host_normal(n * n, 1), b = host_normal(n * n, 2);
            return [=] { f(a->data(), b->data(), n, bt); };
          }};
}

Peer eigen_exp(int64_t n, bool transposed) {
  return {"eigen", [=]() -> Body {
            auto f = eigen_lib().exp;
            auto x = host_normal(n * n, 3);
            return [=] { f(x->data(), n, n, transposed); };
          }};
}

Peer eigen_add(int64_t n, bool transposed) {
  return {"eigen", [=]() -> Body {
            auto f = eigen_lib().add;
            auto x = host_normal(n * n, 4), y = host_normal(n * n, 5);
            return [=] { f(x->data(), y->data(), n, n, transposed); };
          }};
}

Peer eigen_sum(int64_t n, int axis) {
  return {"eigen", [=]() -> Body {
            auto f = eigen_lib().sum;
            auto x = host_normal(n * n, 6);
            return [=] { f(x->data(), n, n, axis); };
          }};
}

}  // namespace bench
