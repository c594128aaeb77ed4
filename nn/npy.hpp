// SPDX-License-Identifier: MIT
#pragma once
/// NumPy's .npy files (numpy.save / numpy.load), one tensor per file:
///
///   6 bytes   magic "\x93NUMPY"
///   2 bytes   version major, minor: 1.0, 2.0 or 3.0
///   2 or 4    N, the header length, little-endian (u16 for 1.0, u32 after)
///   N bytes   a Python dict literal, space-padded, ending in '\n':
///             {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
///   the rest  the elements, in C (row-major) or Fortran (column-major) order
///
/// dtypes: f4, f8, i4, i8, b1 (float32, float64, int32, int64, bool), as
/// strata's f32, f64, i32, i64, bool. save_npy writes what numpy.save writes
/// for the same array (version 1.0, or 2.0 for a header over 64 KiB;
/// little-endian; C order; the data 64-byte aligned), atomically (temporary
/// file + rename). load_npy reads versions 1.0 to 3.0, C and Fortran order,
/// little- and big-endian data (converted), and validates everything first:
/// only a regular file is opened (never blocking on a FIFO or device); the
/// header is parsed by a small non-recursive parser that accepts exactly the
/// three keys, each once, with a string descr, a True/False fortran_order
/// and a tuple of non-negative integers as shape; the header must be ASCII;
/// sizes are checked for overflow and against the file's size before any
/// allocation. A file must hold exactly the array: trailing bytes are an
/// error. Failures are ValueError (DTypeError for a dtype strata does not
/// have, e.g. '<c8' or '|O') "load_npy: 'path': problem"; no other exception
/// type leaves these functions.
#include <string>

#include "diff/tensor.hpp"

namespace strata {

/// Writes t (any layout, any device; written row-major) to path as a .npy file.
void save_npy(const std::string& path, const Tensor& t);

/// The tensor of a .npy file (contiguous, on the CPU).
Tensor load_npy(const std::string& path);

}  // namespace strata
