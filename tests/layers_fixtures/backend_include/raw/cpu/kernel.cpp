// SPDX-License-Identifier: MIT
// A fixture for tests/layers.cmake (never compiled): a
// backend file that reaches the front end through a header of its own.
#include "raw/cpu/kernel.hpp"
