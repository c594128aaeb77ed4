// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/layers.cmake (never compiled): a tree where every layer,
/// jit/ and dist/ included, includes only itself and the layers below it.
#include <vector>
