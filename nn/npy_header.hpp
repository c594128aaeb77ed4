// SPDX-License-Identifier: MIT
#pragma once
/// The header of a .npy file (load_npy's part that reads untrusted text): its
/// dict literal parsed into a dtype, byte order, storage order and shape.
#include <string>
#include <string_view>

#include "core/dtype.hpp"
#include "core/shape.hpp"

namespace strata::detail {

/// What a .npy header says about the array after it.
struct NpyHeader {
  DType dtype = DType::f32;  ///< the element type
  bool big_endian = false;   ///< the elements' byte order
  bool fortran = false;      ///< stored in Fortran (column-major) order
  Shape shape;               ///< the array's shape
};

/// Parses the header's dict literal (exactly 'descr', 'fortran_order' and 'shape',
/// each once); any other text is a ValueError naming path and the byte it stops at,
/// a dtype strata lacks a DTypeError.
NpyHeader parse_npy_header(std::string_view text, const std::string& path);

/// The descr of dtype d without its byte-order character ("f4", ..., "b1").
const char* npy_code(DType d);

}  // namespace strata::detail
