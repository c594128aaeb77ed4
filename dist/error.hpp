// SPDX-License-Identifier: MIT
#pragma once
/// st::DistError: a collective that failed or could not complete (DESIGN §9). It lives with
/// the dist layer, the only one that throws it, so that the layers below stay free of it.
#include "core/error.hpp"

namespace strata {

/// A collective that did not complete: a timeout (another rank died, hung or called a
/// different collective), an error from MPI or NCCL, tensors whose shapes or dtypes differ
/// across ranks, or a process group that is not initialised or already failed. The message
/// names the collective, this rank and, for a timeout, the timeout.
struct DistError : Error {
  using Error::Error;
};

}  // namespace strata
