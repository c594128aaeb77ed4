# SPDX-License-Identifier: MIT
# The layers (DESIGN.md): strata grows upward only,
#
#   core <- raw <- diff <- ad <- jit
#                          ad <- nn <- dist
#
# so a file of a layer includes only headers of its own layer and of the layers
# below it: jit and nn are siblings above ad (neither includes the other), dist
# is above nn. And backends are leaves (STYLE.md 17): the kernels never call
# back into the front end (raw/ops.hpp), which validates once, above them.
#
#   cmake -DROOT=<repository root> [-DEXPECT_LAYERS="core;raw;..."] -P layers.cmake
#
# Fails when
#   - a file under a layer's folder (any depth) includes a header of a layer it
#     may not use, or the umbrella strata.hpp (which includes every layer);
#   - a file under raw/cpu/ or raw/cuda/, or raw/backend.cpp or
#     raw/index_support.cpp (the helpers backends share), includes raw/ops.hpp
#     directly or through the repository headers it includes, or names anything
#     in namespace raw (`raw::`, outside // comments);
#   - a layer named in EXPECT_LAYERS has no folder (the check would see nothing).
# Layers whose folder does not exist yet (jit/, dist/) are checked once it does.
cmake_minimum_required(VERSION 3.25)

# Each layer, and the layers its files may include (itself included).
set(layers core raw diff ad jit nn dist)
set(may_core core)
set(may_raw core raw)
set(may_diff core raw diff)
set(may_ad core raw diff ad)
set(may_jit core raw diff ad jit)
set(may_nn core raw diff ad nn)
set(may_dist core raw diff ad nn dist)

set(problems "")
foreach(layer IN LISTS EXPECT_LAYERS)
  if(NOT IS_DIRECTORY "${ROOT}/${layer}")
    string(APPEND problems "  layer ${layer} has no folder ${ROOT}/${layer}\n")
  endif()
endforeach()

# --- includes point down the layers ---------------------------------------------------
set(checked 0)
foreach(layer IN LISTS layers)
  if(NOT IS_DIRECTORY "${ROOT}/${layer}")
    continue()
  endif()
  file(GLOB_RECURSE files RELATIVE "${ROOT}" "${ROOT}/${layer}/*")
  foreach(name IN LISTS files)
    if(NOT name MATCHES "\\.(h|hpp|c|cc|cpp|cu|cuh|inc)$")
      continue()
    endif()
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${ROOT}/${name}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*[\"<]")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*[\"<]([^\">]+)[\">].*$" "\\1" header
                           "${inc}")
      if(header STREQUAL "strata.hpp" OR header STREQUAL "strata/strata.hpp")
        string(APPEND problems "  ${name} includes ${header}, which includes every layer; "
                               "include the headers of ${layer} and below it instead\n")
        continue()
      endif()
      # In-tree includes are written from the repository root (installed: under strata/).
      string(REGEX REPLACE "^strata/" "" path "${header}")
      string(REGEX MATCH "^[^/]+" first "${path}")
      if(NOT first IN_LIST layers OR NOT path MATCHES "/")
        continue()  # a system or third-party header, or one next to the file
      endif()
      if(NOT first IN_LIST may_${layer})
        string(REPLACE ";" ", " allowed "${may_${layer}}")
        string(APPEND problems "  ${name} (layer ${layer}) includes ${header} (layer ${first}); "
                               "${layer} may include only ${allowed}\n")
      endif()
    endforeach()
  endforeach()
endforeach()

# --- backends are leaves -------------------------------------------------------------
file(GLOB_RECURSE backend_files "${ROOT}/raw/cpu/*" "${ROOT}/raw/cuda/*")
foreach(helper raw/backend.cpp raw/index_support.cpp)
  if(EXISTS "${ROOT}/${helper}")
    list(APPEND backend_files "${ROOT}/${helper}")
  endif()
endforeach()
foreach(file ${backend_files})
  file(RELATIVE_PATH name "${ROOT}" "${file}")
  # Calls: every line naming raw::, with its // comment removed.
  file(STRINGS "${file}" lines REGEX "raw::")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE "//.*$" "" code " ${line}")
    if(code MATCHES "[^A-Za-z0-9_]raw::")
      string(STRIP "${line}" line)
      string(APPEND problems "  ${name} calls the front end: ${line}\n")
    endif()
  endforeach()
  # Includes, followed through the repository's own headers.
  set(queue "${name}")
  set(seen "${name}")
  while(queue)
    list(POP_FRONT queue current)
    file(STRINGS "${ROOT}/${current}" includes REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(inc IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*\"([^\"]+)\".*$" "\\1" header "${inc}")
      if(header STREQUAL "raw/ops.hpp")
        if(current STREQUAL name)
          string(APPEND problems "  ${name} includes raw/ops.hpp\n")
        else()
          string(APPEND problems "  ${name} includes raw/ops.hpp through ${current}\n")
        endif()
      elseif(EXISTS "${ROOT}/${header}" AND NOT header IN_LIST seen)
        list(APPEND seen "${header}")
        list(APPEND queue "${header}")
      endif()
    endforeach()
  endwhile()
endforeach()

if(problems)
  message(FATAL_ERROR "layering: a layer includes only its own headers and those of the layers "
                      "below it (core <- raw <- diff <- ad <- jit, ad <- nn <- dist), and "
                      "backends never call the front end (raw/ops.hpp: allocate with "
                      "detail::backend_empty / backend_contiguous of raw/backend.hpp, or have "
                      "the front end pass operands in the form the kernel needs):\n${problems}")
endif()
if(checked EQUAL 0)
  message(FATAL_ERROR "layering: no source files under any layer folder of ${ROOT}")
endif()
list(LENGTH backend_files n)
message(STATUS "layering: ${checked} files include only their layer and those below it; "
               "${n} backend files, none reaches raw/ops.hpp")
