# SPDX-License-Identifier: MIT
# Backends are leaves (STYLE.md 17): the kernels never call back into the
# front end (raw/ops.hpp), which validates once, above them.
#   cmake -DROOT=<repository root> -P backends_are_leaves.cmake
# Fails when a file under raw/cpu/ or raw/cuda/, or raw/backend.cpp or
# raw/index_support.cpp (the helpers backends share), includes raw/ops.hpp
# directly or through the repository headers it includes, or names anything
# in namespace raw (`raw::`, outside // comments).
cmake_minimum_required(VERSION 3.25)
file(GLOB_RECURSE files "${ROOT}/raw/cpu/*" "${ROOT}/raw/cuda/*")
foreach(helper raw/backend.cpp raw/index_support.cpp)
  if(EXISTS "${ROOT}/${helper}")
    list(APPEND files "${ROOT}/${helper}")
  endif()
endforeach()
if(NOT files)
  message(FATAL_ERROR "no backend sources under ${ROOT}/raw/cpu or ${ROOT}/raw/cuda")
endif()

set(problems "")
foreach(file ${files})
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
  message(FATAL_ERROR "backends must not call the front end (raw/ops.hpp); allocate with "
                      "detail::backend_empty / backend_contiguous (raw/backend.hpp), or have "
                      "the front end pass operands in the form the kernel needs:\n${problems}")
endif()
list(LENGTH files n)
message(STATUS "${n} backend files checked: none reaches raw/ops.hpp")
