// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/layers.cmake (never compiled): jit/ is above ad/ but beside
/// nn/, so it may include ad/ and not nn/.
#include "ad/transforms.hpp"
#include "nn/layers.hpp"
