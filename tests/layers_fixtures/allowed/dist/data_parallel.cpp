// SPDX-License-Identifier: MIT
// A fixture for tests/layers.cmake (never compiled): dist/ is above nn/.
#include "dist/data_parallel.hpp"
#include "ad/transforms.hpp"
#include "nn/layers.hpp"
