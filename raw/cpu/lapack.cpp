// SPDX-License-Identifier: MIT
// Loads OpenBLAS for the CPU's factorisations (raw/cpu/lapack.hpp says why at
// run time, and with which settings).
#include "raw/cpu/lapack.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "raw/cpu/vmath.hpp"

#ifndef STRATA_OPENBLAS_PATH
#define STRATA_OPENBLAS_PATH "libopenblas.so.0"
#endif

namespace strata::detail {
namespace {

/// Sets an environment variable until the end of the scope, then puts the old value back
/// (OpenBLAS reads its variables while it loads; programs strata starts later never see ours).
class EnvFor {
 public:
  EnvFor(const char* name, const char* value, bool overwrite) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (!value || (old_ && !overwrite)) return;
    setenv(name, value, 1);
    set_ = true;
  }
  ~EnvFor() {
    if (!set_) return;
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  EnvFor(const EnvFor&) = delete;
  EnvFor& operator=(const EnvFor&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
  bool set_ = false;
};

/// OpenBLAS's name for the kernels of the instruction set strata's own kernels use, or
/// nullptr to let it detect the CPU.
const char* coretype() {
  const vmath::Kernels* k = vmath::best();
  if (!k) return nullptr;
  if (k->isa == vmath::Isa::avx512) {
    __builtin_cpu_init();
    // OpenBLAS's AVX-512 kernels (SkylakeX) use the BW, DQ and VL extensions too.
    if (__builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl")) {
      return "SkylakeX";
    }
    return "Haswell";
  }
  if (k->isa == vmath::Isa::avx2) return "Haswell";
  return nullptr;
}

template <class F>
void resolve(void* h, const char* name, F& fn, std::vector<std::string>& missing) {
  fn = reinterpret_cast<F>(dlsym(h, name));
  if (!fn) missing.emplace_back(name);
}

template <class T>
void resolve_all(void* h, char p, LapackFns<T>& f, std::vector<std::string>& missing) {
  auto name = [p](const char* base) { return std::string(1, p) + base; };
  resolve(h, name("potrf_").c_str(), f.potrf, missing);
  resolve(h, name("trsm_").c_str(), f.trsm, missing);
  resolve(h, name("gemm_").c_str(), f.gemm, missing);
  resolve(h, name("syrk_").c_str(), f.syrk, missing);
  resolve(h, name("getrf_").c_str(), f.getrf, missing);
  resolve(h, name("laswp_").c_str(), f.laswp, missing);
  resolve(h, name("syevd_").c_str(), f.syevd, missing);
  resolve(h, name("gesdd_").c_str(), f.gesdd, missing);
  resolve(h, name("geqrf_").c_str(), f.geqrf, missing);
  resolve(h, name("orgqr_").c_str(), f.orgqr, missing);
}

struct Loaded {
  Lapack lib;
  std::string error;  // why nothing was loaded
};

Loaded load() {
  Loaded out;
  void* h = nullptr;
  std::string errors;
  {
    const EnvFor threads("OPENBLAS_NUM_THREADS", "1", true);
    const EnvFor core("OPENBLAS_CORETYPE", coretype(), false);
    for (const char* path : {STRATA_OPENBLAS_PATH, "libopenblas.so.0"}) {
      h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (h) {
        out.lib.path = path;
        break;
      }
      errors += std::string(errors.empty() ? "" : "; ") + dlerror();
    }
  }
  if (!h) {
    out.error = "cannot load OpenBLAS (" + errors +
                "); install it (Debian: apt-get install libopenblas-dev)";
    return out;
  }
  std::vector<std::string> missing;
  resolve_all(h, 's', out.lib.s, missing);
  resolve_all(h, 'd', out.lib.d, missing);
  void (*set_threads)(int) = nullptr;
  int (*parallel)() = nullptr;
  char* (*corename)() = nullptr;
  resolve(h, "openblas_set_num_threads", set_threads, missing);
  resolve(h, "openblas_get_parallel", parallel, missing);
  resolve(h, "openblas_get_corename", corename, missing);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    out.error = out.lib.path + " lacks " + names + " (is it OpenBLAS?)";
    return out;
  }
  set_threads(1);
  out.lib.concurrent = parallel() != 0;
  out.lib.corename = corename();
  return out;
}

}  // namespace

const Lapack& lapack(std::string_view op) {
  static const Loaded loaded = load();
  if (!loaded.error.empty()) fail<DeviceError>(op, loaded.error);
  return loaded.lib;
}

}  // namespace strata::detail
