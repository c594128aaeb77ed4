// SPDX-License-Identifier: MIT
#pragma once
/// The dist layer: `#include <dist/dist.hpp>` and link strata::dist (built when CMake finds
/// MPI; not part of <strata.hpp>, whose users never need MPI). The process group and its
/// collectives (MPI for CPU tensors, NCCL for CUDA ones), data-parallel training, each
/// rank's part of every batch, and vmap / jacrev / hessian split over the ranks.
/// docs/DISTRIBUTED.md: how to launch, the design, the fault behaviour.
#include "dist/data_parallel.hpp"
#include "dist/error.hpp"
#include "dist/process_group.hpp"
#include "dist/sampler.hpp"
#include "dist/shard.hpp"
