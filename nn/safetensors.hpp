// SPDX-License-Identifier: MIT
#pragma once
/// Checkpoints in the safetensors format (huggingface/safetensors), so files
/// interoperate with PyTorch, JAX, NumPy and other tools:
///
///   8 bytes   N, the header length, little-endian u64
///   N bytes   JSON: {"name": {"dtype": "F32", "shape": [2, 3],
///                             "data_offsets": [begin, end]}, ...,
///                    "__metadata__": {"key": "value", ...}}   (optional)
///   the rest  the tensors' raw little-endian bytes, row-major; offsets are
///             relative to the start of this region, which they tile exactly
///
/// dtypes: F32, F64, I32, I64, BOOL (one byte, 0 or 1). Saving is atomic: the
/// file is written to a temporary file in the same directory and renamed
/// over the target, so a crash never leaves a half-written checkpoint.
/// Loading validates everything before use and throws ValueError (DTypeError
/// for an unsupported dtype) naming the operation, the file and the problem:
/// only a regular file is opened (a FIFO, device or directory is refused
/// without blocking), the header's length is checked against the file's size
/// before anything is allocated, and its JSON may nest at most 16 levels.
/// Saving refuses names and metadata that are not UTF-8 (the header is JSON).
/// No other exception type leaves these functions (nn/file_io.hpp).
#include <map>
#include <optional>
#include <string>

#include "diff/tensor.hpp"

namespace strata {

/// Writes the named tensors (any layout; written row-major) and optional
/// string metadata to path. Names must be non-empty and not "__metadata__".
void save_safetensors(const std::string& path, const std::map<std::string, Tensor>& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// The named tensors of a safetensors file (contiguous, on the CPU).
std::map<std::string, Tensor> load_safetensors(const std::string& path);

/// The "__metadata__" of a safetensors file (empty when it has none).
std::map<std::string, std::string> load_safetensors_metadata(const std::string& path);

namespace detail {
/// The safetensors name of a dtype ("F32", "F64", "I32", "I64", "BOOL"), also
/// used by a tensor's JSON form (nn/json.hpp).
const char* safetensors_dtype_name(DType d);
/// The dtype of a safetensors name; nullopt for any other name.
std::optional<DType> safetensors_dtype(const std::string& name);
}  // namespace detail

}  // namespace strata
