# The CPU backend's libraries and per-instruction-set sources.
#
# SLEEF (libsleef-dev) supplies the vectorised transcendental functions; its
# kernels are compiled once per x86 instruction set (raw/cpu/vmath_<isa>.cpp,
# each with its own -m flags) and chosen at run time, so the build runs on any
# x86-64 CPU and uses AVX-512 where the CPU has it. No other file gets ISA flags.
find_path(SLEEF_INCLUDE_DIR sleef.h)
find_library(SLEEF_LIBRARY sleef)
if(NOT SLEEF_INCLUDE_DIR OR NOT SLEEF_LIBRARY)
  message(FATAL_ERROR "strata needs SLEEF (Debian: apt-get install libsleef-dev)")
endif()
set(STRATA_CPU_INCLUDES ${SLEEF_INCLUDE_DIR})
set(STRATA_CPU_LIBS ${SLEEF_LIBRARY})
set(STRATA_CPU_DEFS "")
set(STRATA_VMATH_SOURCES "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64")
  set(STRATA_VMATH_SOURCES raw/cpu/vmath_sse2.cpp raw/cpu/vmath_avx2.cpp raw/cpu/vmath_avx512.cpp)
  set_source_files_properties(raw/cpu/vmath_avx2.cpp PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
  # -Wno-maybe-uninitialized is GCC's (clang has no such warning and warns about the flag).
  set_source_files_properties(raw/cpu/vmath_avx512.cpp PROPERTIES COMPILE_OPTIONS
                              "-mavx512f;-mavx2;-mfma;$<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>")
endif()

# oneDNN (libdnnl-dev) supplies the f32 GEMM: JIT kernels for the instruction
# set the CPU reports (AVX-512, AVX2, SSE4.1), measured fastest of the GEMMs in
# Debian (docs/PERFORMANCE.md). strata calls it single-threaded on blocks it
# splits over its own thread pool, so libgomp (oneDNN's runtime) never starts
# a team. Without oneDNN, Eigen's GEMM does all products.
option(STRATA_USE_DNNL "Use oneDNN's sgemm for f32 matmul when it is found" ON)
if(STRATA_USE_DNNL)
  find_path(DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.h)
  find_library(DNNL_LIBRARY dnnl)
endif()
if(STRATA_USE_DNNL AND DNNL_INCLUDE_DIR AND DNNL_LIBRARY)
  message(STATUS "strata: f32 matmul through oneDNN (${DNNL_LIBRARY})")
  list(APPEND STRATA_CPU_INCLUDES ${DNNL_INCLUDE_DIR})
  list(APPEND STRATA_CPU_LIBS ${DNNL_LIBRARY} gomp)
  list(APPEND STRATA_CPU_DEFS STRATA_HAVE_DNNL=1)
else()
  message(STATUS "strata: f32 matmul through Eigen (oneDNN not found or STRATA_USE_DNNL=OFF)")
endif()
