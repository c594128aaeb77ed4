// SPDX-License-Identifier: MIT
// A fixture for tests/layers.cmake (never compiled): nn/ reaching up into dist/.
#include "nn/optim.hpp"
#include "dist/process_group.hpp"
