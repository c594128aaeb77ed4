// SPDX-License-Identifier: MIT
#pragma once
/// What every test of st::vmap (tests/ad/vmap*.test.cpp) starts with: strata,
/// Catch2, the references (a loop over examples, stacked; central finite
/// differences: vmap_ref.hpp), the three-way sweep of one function against them
/// (vmap_sweep.hpp), f64 inputs, and their names in the test file's scope.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <strata.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "support/ad_inputs.hpp"
#include "support/vmap_ref.hpp"
#include "support/vmap_sweep.hpp"

namespace st = strata;
using st::testing::example;
using st::testing::fd_jacobian;
using st::testing::normal;
using st::testing::require_close;
using st::testing::stacked;
using st::testing::vmap_sweep::check;
using st::testing::vmap_sweep::Operands;
