// SPDX-License-Identifier: MIT
// A fixture for tests/layers.cmake (never compiled): a backend including a header of
// its own and core/; a comment naming raw::contiguous is not a call.
#include "raw/cpu/kernel.hpp"
#include "core/shape.hpp"
