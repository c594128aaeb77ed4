// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/layers.cmake (never compiled).
#include "ad/transforms.hpp"
#include "core/shape.hpp"
