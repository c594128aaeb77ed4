// SPDX-License-Identifier: MIT
#pragma once
/// IDX files, the format of MNIST and Fashion-MNIST (LeCun's; Debian's
/// dataset-fashion-mnist ships them gzipped in /usr/share/datasets/fashion-mnist/):
///
///   2 bytes        zero
///   1 byte         the element type: 0x08 u8, 0x09 i8, 0x0B i16, 0x0C i32,
///                  0x0D f32, 0x0E f64
///   1 byte         the number of dims, at least 1
///   4 bytes a dim  each dim, big-endian u32
///   the rest       the elements, row-major, big-endian
///
/// load_idx reads a plain file or one gzipped as a whole (it starts with gzip's
/// magic 1f 8b; inflated by zlib, whose CRC check catches a corrupt stream). The
/// integer types come back as i32 (strata has no 8- or 16-bit integers; every
/// value is kept exactly), f32 and f64 as themselves. Everything is validated
/// before the elements are read: the magic, the type, the dims' element count
/// (overflow-checked) against the bytes the file holds (for a gzip stream,
/// against the most its compressed size can inflate to), a truncated or corrupt
/// stream, and trailing bytes after the elements. Failures are ValueError
/// "load_idx: 'path': problem"; no other exception type leaves it.
#include <string>

#include "diff/tensor.hpp"

namespace strata {

/// The tensor of an IDX file, plain or gzipped (contiguous, on the CPU): i32 for the
/// integer element types, f32 or f64 for the float ones; shape as the file's dims.
Tensor load_idx(const std::string& path);

}  // namespace strata
