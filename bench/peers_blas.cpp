// SPDX-License-Identifier: MIT
// The BLAS peers: OpenBLAS and BLIS as Debian ships them, loaded at run time
// (dlopen) so strata_bench builds and runs without them; a missing library is
// reported and its column left empty.
//
// Best configuration, each with 2 of its own threads:
//   OpenBLAS is loaded into a link-map namespace of its own (dlmopen), so that
//   setting its threads never reaches the instance strata's factorisations use.
//   OpenBLAS 0.3.21 picks its kernel by CPU model and does not know recent
//   Xeons (it falls back to SSE3 kernels, ~6x slow). On a CPU with AVX-512 we
//   set OPENBLAS_CORETYPE=SkylakeX before loading it, unless the environment
//   sets it (make bench-avx2: Haswell); it is read only when the library
//   loads, and this file loads it, so the setting always takes effect.
//   BLIS chooses its kernels from the CPU's feature flags (0.9.0 does not
//   know AMD family 26, Zen 5, and runs its generic kernels there).
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "bench/peers.hpp"

namespace bench {
namespace {

using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int,
                       float, float*, int);
using SetThreads = void (*)(int);

struct BlasLib {
  std::string name;
  Sgemm sgemm = nullptr;
};

void* open_first(std::initializer_list<const char*> paths) {
  for (const char* p : paths) {
    if (void* h = dlopen(p, RTLD_NOW | RTLD_LOCAL)) return h;
  }
  return nullptr;
}

/// The peers' OpenBLAS in a link-map namespace of its own (dlmopen), with 2 threads: the
/// instance strata's factorisations load (raw/cpu/lapack.cpp, one thread) is another one.
void* openblas_handle() {
  static void* const h = [] {
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq")) {
      setenv("OPENBLAS_CORETYPE", "SkylakeX", 0);
    }
    for (const char* p :
         {"/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0", "libopenblas.so.0"}) {
      if (void* lib = dlmopen(LM_ID_NEWLM, p, RTLD_NOW | RTLD_LOCAL)) {
        if (auto set = reinterpret_cast<SetThreads>(dlsym(lib, "openblas_set_num_threads"))) {
          set(2);
        }
        return lib;
      }
    }
    return static_cast<void*>(nullptr);
  }();
  return h;
}

const BlasLib& openblas() {
  static const BlasLib lib = [] {
    BlasLib l{"openblas"};
    void* h = openblas_handle();
    if (!h) {
      std::printf("peer openblas: not installed (apt-get install libopenblas-dev), skipped\n");
      return l;
    }
    l.sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    using Config = char* (*)();
    if (auto cfg = reinterpret_cast<Config>(dlsym(h, "openblas_get_config"))) {
      std::printf("peer openblas: %s, 2 threads\n", cfg());
    }
    return l;
  }();
  return lib;
}

const BlasLib& blis() {
  static const BlasLib lib = [] {
    BlasLib l{"blis"};
    void* h = open_first({"/usr/lib/x86_64-linux-gnu/blis-openmp/libblis.so.4",
                          "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4", "libblis.so.4"});
    if (!h) {
      std::printf("peer blis: not installed (apt-get install libblis-dev), skipped\n");
      return l;
    }
    if (auto set = reinterpret_cast<SetThreads>(dlsym(h, "bli_thread_set_num_threads"))) set(2);
    l.sgemm = reinterpret_cast<Sgemm>(dlsym(h, "cblas_sgemm"));
    using ArchName = const char* (*)(int);
    using ArchQuery = int (*)();
    auto query = reinterpret_cast<ArchQuery>(dlsym(h, "bli_arch_query_id"));
    auto name = reinterpret_cast<ArchName>(dlsym(h, "bli_arch_string"));
    if (query && name) std::printf("peer blis: kernels for %s, 2 threads\n", name(query()));
    return l;
  }();
  return lib;
}

Peer blas_peer(const BlasLib& (*lib)(), const char* name, int64_t n, bool bt) {
  return {name, [=]() -> Body {
            const BlasLib& l = lib();
            if (!l.sgemm) return nullptr;
            auto a = host_normal(n * n, 1), b = host_normal(n * n, 2);
            auto c = std::make_shared<std::vector<float>>(std::size_t(n * n));
            const int ni = int(n);
            return [=] {
              // Row-major (101); B as stored (111) or as the transpose (112) of a row-major matrix.
              l.sgemm(101, 111, bt ? 112 : 111, ni, ni, ni, 1.0f, a->data(), ni, b->data(), ni,
                      0.0f, c->data(), ni);
            };
          }};
}

}  // namespace

const LapackPeer& lapack_peer() {
  static const LapackPeer lib = [] {
    LapackPeer l;
    if (void* h = openblas_handle()) {
      l.dpotrf = reinterpret_cast<decltype(l.dpotrf)>(dlsym(h, "dpotrf_"));
      l.dgesv = reinterpret_cast<decltype(l.dgesv)>(dlsym(h, "dgesv_"));
      l.dsyevd = reinterpret_cast<decltype(l.dsyevd)>(dlsym(h, "dsyevd_"));
    }
    return l;
  }();
  return lib;
}

void load_blas_peers() {
  openblas();
  blis();
}

std::vector<Peer> blas_peers(int64_t n, bool bt) {
  return {blas_peer(openblas, "openblas", n, bt), blas_peer(blis, "blis", n, bt)};
}

}  // namespace bench
