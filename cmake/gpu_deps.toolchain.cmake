# Configures strata against the private prefix that bench/gpu_deps.sh fills
# (the Debian packages a bare GPU image lacks) and nothing else installed on
# the machine: every find_package, find_path and find_library looks only
# inside that prefix and the CUDA Toolkit, so a copy of Eigen, Catch2,
# nlohmann-json, SLEEF or oneDNN elsewhere on the machine is never picked up.
# Programs (the compilers, nvcc, ninja, python3) are found as usual.
#
#   cmake -S . -B build-gpu --toolchain cmake/gpu_deps.toolchain.cmake -DSTRATA_CUDA=ON
#
# The prefix: $STRATA_GPU_DEPS_PREFIX when set, else .gpu-deps/prefix in this
# checkout. The CUDA Toolkit: the folder above the bin/ of CMAKE_CUDA_COMPILER,
# $CUDACXX, /usr/local/cuda/bin/nvcc or the nvcc on PATH (symbolic links
# resolved). This file is read again for every try_compile, so it only
# derives values and never caches them.
if(DEFINED ENV{STRATA_GPU_DEPS_PREFIX} AND NOT "$ENV{STRATA_GPU_DEPS_PREFIX}" STREQUAL "")
  set(_strata_prefix "$ENV{STRATA_GPU_DEPS_PREFIX}")
else()
  get_filename_component(_strata_prefix "${CMAKE_CURRENT_LIST_DIR}/../.gpu-deps/prefix" ABSOLUTE)
endif()
if(NOT EXISTS "${_strata_prefix}/usr/include")
  message(FATAL_ERROR "gpu_deps.toolchain: no prefix at ${_strata_prefix}: run bench/gpu_deps.sh "
                      "first (or set STRATA_GPU_DEPS_PREFIX)")
endif()

set(_strata_nvcc "")
foreach(_c "${CMAKE_CUDA_COMPILER}" "$ENV{CUDACXX}" /usr/local/cuda/bin/nvcc)
  if(NOT _strata_nvcc AND NOT "${_c}" STREQUAL "" AND EXISTS "${_c}")
    set(_strata_nvcc "${_c}")
  endif()
endforeach()
if(NOT _strata_nvcc)
  find_program(_strata_nvcc_found nvcc NO_CACHE)
  if(_strata_nvcc_found)
    set(_strata_nvcc "${_strata_nvcc_found}")
  endif()
endif()
set(CMAKE_FIND_ROOT_PATH "${_strata_prefix}")
if(_strata_nvcc)
  get_filename_component(_strata_cuda "${_strata_nvcc}" REALPATH)
  get_filename_component(_strata_cuda "${_strata_cuda}" DIRECTORY)
  get_filename_component(_strata_cuda "${_strata_cuda}" DIRECTORY)
  if(_strata_cuda STREQUAL "/usr" OR _strata_cuda STREQUAL "/")
    # A distribution's toolkit (nvcc in /usr/bin): its root would expose all of /usr.
    message(WARNING "gpu_deps.toolchain: the CUDA Toolkit is installed in ${_strata_cuda}; "
                    "searching it exposes the system's packages too")
  endif()
  list(APPEND CMAKE_FIND_ROOT_PATH "${_strata_cuda}")
  if(NOT DEFINED CMAKE_CUDA_COMPILER)
    set(CMAKE_CUDA_COMPILER "${_strata_nvcc}")
  endif()
endif()

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian's multiarch folders (sleef.h is in include/x86_64-linux-gnu), also on
# an image whose compiler does not report a library architecture.
list(APPEND CMAKE_INCLUDE_PATH "${_strata_prefix}/usr/include/x86_64-linux-gnu")
list(APPEND CMAKE_LIBRARY_PATH "${_strata_prefix}/usr/lib/x86_64-linux-gnu")
# That folder stands in for the system's /usr/include/x86_64-linux-gnu, whose
# headers the compiler treats as system headers (no warnings from them): the
# same here, or sleef.h's 1800 -Wignored-qualifiers warnings bury the build log.
set(CMAKE_CXX_STANDARD_INCLUDE_DIRECTORIES "${_strata_prefix}/usr/include/x86_64-linux-gnu")
