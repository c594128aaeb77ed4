// SPDX-License-Identifier: MIT
#pragma once
/// A fixture for tests/layers.cmake (never compiled): a core/ header including the
/// umbrella header, which includes every layer.
#include <strata.hpp>
