// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/layers.cmake (never compiled): a composite of diff/ that
/// reaches up into ad/. The includes of its own layer and below are fine, and so is
/// this commented-out one: // #include "nn/nn.hpp"
#include <vector>

#include "ad/reverse.hpp"
#include "core/shape.hpp"
#include "diff/tensor.hpp"
