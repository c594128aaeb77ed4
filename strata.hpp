// SPDX-License-Identifier: MIT
#pragma once
/// strata: automatic differentiation on tensors. `#include <strata.hpp>` is the one header
/// users include, and programs write `namespace st = strata;`. Everything public is in this
/// namespace (and strata::nn, strata::tree, ...); internals live in nested `detail` namespaces.
namespace strata {}

#include "ad/argnums.hpp"
#include "ad/custom.hpp"
#include "ad/hooks.hpp"
#include "ad/hvp.hpp"
#include "ad/jacobian.hpp"
#include "ad/sparse/sparse.hpp"
#include "ad/transforms.hpp"
#include "ad/vmap.hpp"
#include "core/allocator.hpp"
#include "core/device.hpp"
#include "core/dtype.hpp"
#include "core/error.hpp"
#include "core/key.hpp"
#include "core/layout.hpp"
#include "core/parallel.hpp"
#include "core/shape.hpp"
#include "diff/debug_nans.hpp"
#include "diff/index.hpp"
#include "diff/ops.hpp"
#include "diff/tensor.hpp"
#include "jit/jit.hpp"
#include "nn/nn.hpp"
#include "raw/backend.hpp"
#include "raw/ops.hpp"
#include "raw/primitives.hpp"
#include "raw/print.hpp"
#include "raw/raw_tensor.hpp"
