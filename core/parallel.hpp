// SPDX-License-Identifier: MIT
#pragma once
/// One thread pool for the whole library. parallel_for splits a range into
/// contiguous chunks, one per thread; chunking never changes what a kernel
/// computes, so results are the same for any thread count.
#include <cstdint>
#include <functional>

namespace strata {

/// Threads kernels use (default: STRATA_NUM_THREADS, else the hardware's count).
int num_threads();
/// Sets the thread count for later kernels (n >= 1).
void set_num_threads(int n);

namespace detail {
/// Runs fn(lo, hi) over pieces covering [begin, end), in parallel when the
/// range is larger than `grain` elements. Calls from inside a worker run inline.
/// Rethrows the first exception a piece threw.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& fn);
}  // namespace detail

}  // namespace strata
