// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/raw/backends_are_leaves.cmake (never compiled).
#include "raw/ops.hpp"
