# The CPU backend's libraries and per-instruction-set sources.
#
# SLEEF (libsleef-dev) supplies the vectorised transcendental functions; its
# kernels are compiled once per x86 instruction set (raw/cpu/vmath_<isa>.cpp,
# each with its own -m flags) and chosen at run time, so the build runs on any
# x86-64 CPU and uses AVX-512 where the CPU has it. Besides them only Eigen's GEMM
# (raw/cpu/gemm_<isa>.cpp, below) gets ISA flags.
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

# Eigen's GEMM (f64 products, small f32 ones) for AVX2 and AVX-512 as well as
# the baseline: raw/cpu/gemm_<isa>.cpp, each compiled with its flags and hidden
# symbols, then its section groups dissolved and every hidden symbol made
# local (objcopy), so that its Eigen instantiations can never stand in for the
# baseline's ones of the same name (raw/cpu/eigen_gemm.hpp). STRATA_GEMM_OBJECTS: the objects strata_raw links.
set(STRATA_GEMM_OBJECTS "")
if(CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64|amd64" AND CMAKE_OBJCOPY)
  foreach(isa avx2 avx512)
    set(flags -mavx2 -mfma)
    if(isa STREQUAL "avx512")
      set(flags -mavx512f -mavx2 -mfma $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
    endif()
    add_library(strata_gemm_${isa} OBJECT raw/cpu/gemm_${isa}.cpp)
    target_include_directories(strata_gemm_${isa} PRIVATE ${PROJECT_SOURCE_DIR})
    target_link_libraries(strata_gemm_${isa} PRIVATE Eigen3::Eigen)
    target_compile_features(strata_gemm_${isa} PRIVATE cxx_std_20)
    target_compile_definitions(strata_gemm_${isa} PRIVATE STRATA_HAVE_ISA_GEMM=1)
    # GCC gives function-local statics in inline functions STB_GNU_UNIQUE
    # binding, which objcopy cannot localise; -fno-gnu-unique makes them weak.
    target_compile_options(strata_gemm_${isa} PRIVATE ${flags} -fvisibility=hidden
                           -fvisibility-inlines-hidden $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
    set_target_properties(strata_gemm_${isa} PROPERTIES POSITION_INDEPENDENT_CODE ON)
    set(local ${CMAKE_CURRENT_BINARY_DIR}/strata_gemm_${isa}_local.o)
    add_custom_command(
      OUTPUT ${local}
      COMMAND ${CMAKE_OBJCOPY} --remove-section=.group --localize-hidden
              $<TARGET_OBJECTS:strata_gemm_${isa}> ${local}
      DEPENDS strata_gemm_${isa} $<TARGET_OBJECTS:strata_gemm_${isa}>
      COMMENT "Localising the symbols of Eigen's ${isa} GEMM"
      VERBATIM)
    set_source_files_properties(${local} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
    list(APPEND STRATA_GEMM_OBJECTS ${local})
  endforeach()
  list(APPEND STRATA_CPU_DEFS STRATA_HAVE_ISA_GEMM=1)
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

# OpenBLAS's LAPACK does the CPU's factorisations (raw/cpu/lapack.hpp): the
# pthread build (libopenblas0-pthread; its serial build has no locks, and
# strata calls it from several threads), loaded at run time from the path
# found here, so that strata can choose its kernels and its thread count
# before it initialises. STRATA_OPENBLAS_PATH: that path.
find_library(STRATA_OPENBLAS_LIBRARY NAMES libopenblas.so.0 openblas
             PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-pthread
                   /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp
             NO_DEFAULT_PATH)
if(NOT STRATA_OPENBLAS_LIBRARY)
  find_library(STRATA_OPENBLAS_LIBRARY NAMES libopenblas.so.0 openblas)
endif()
if(NOT STRATA_OPENBLAS_LIBRARY)
  message(FATAL_ERROR "strata needs OpenBLAS for its CPU linear algebra "
                      "(Debian: apt-get install libopenblas0-pthread)")
endif()
message(STATUS "strata: CPU linear algebra through ${STRATA_OPENBLAS_LIBRARY}")
list(APPEND STRATA_CPU_LIBS ${CMAKE_DL_LIBS})
set_source_files_properties(raw/cpu/lapack.cpp PROPERTIES COMPILE_DEFINITIONS
                            "STRATA_OPENBLAS_PATH=\"${STRATA_OPENBLAS_LIBRARY}\"")
