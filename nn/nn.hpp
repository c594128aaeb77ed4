// SPDX-License-Identifier: MIT
#pragma once
/// The nn layer: parameters as named maps, layers, losses, initialisers,
/// optimisers, a batch iterator, safetensors checkpoints and NumPy .npy
/// files. (nn/json.hpp, the JSON form of one tensor, is separate: it needs
/// nlohmann/json.)
#include "nn/data.hpp"
#include "nn/idx.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"
#include "nn/losses.hpp"
#include "nn/npy.hpp"
#include "nn/optim.hpp"
#include "nn/params.hpp"
#include "nn/safetensors.hpp"
#include "nn/schedule.hpp"
#include "nn/text.hpp"
#include "nn/transformer.hpp"
