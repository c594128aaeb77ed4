// SPDX-License-Identifier: MIT
#pragma once
/// What every derivative test of the composites (tests/ad/composites*.test.cpp)
/// starts with: strata, Catch2, the f64 inputs drawn away from the points where a
/// primitive is not differentiable (ad_inputs.hpp), check_grads, and their names
/// in the test file's scope.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <strata.hpp>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/check_grads.hpp"

namespace st = strata;
using st::testing::check_grads;
using st::testing::f64s;
using st::testing::nonzero;
using st::testing::normal;
using st::testing::positive;
