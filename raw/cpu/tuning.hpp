// SPDX-License-Identifier: MIT
#pragma once
/// The CPU backend's run-time tuning, in one settings object: the choices of
/// the memory-bound kernels whose best value was measured to differ between
/// CPUs (docs/PERFORMANCE.md). They are decided once, from what the CPU
/// reports, and none of them changes a result: only the order of the work or
/// the kind of store. The tests set other values to run every path.
#include <cstdint>

namespace strata::detail {

/// A tile of the staged walk (raw/cpu/staged_walk.hpp): `rows` rows (the
/// transposed operand's fast dim) x `cols` columns (the result's fast dim).
struct StageTile {
  int64_t rows, cols;
};

/// The CPU kernels' tuning settings.
struct CpuTuning {
  /// Tile of the staged walk. Far larger than the cache-blocked walk's kTile:
  /// every row of a tile touches another page of the transposed operand, so
  /// the best shape balances the source runs per page against the result's
  /// row length, and that balance differs between CPUs. The staging buffer
  /// is 512 KiB of f64 with either default.
  StageTile stage_tile{64, 1024};

  /// Result bytes from which a walk over a transposed view writes its result
  /// with streaming stores, each line whole: stream_transposed's maps and
  /// copies straight from registers, the staged walk's result rows through a
  /// small buffer. Below it the result is written with plain stores and left
  /// in the caches for its reader.
  int64_t stream_transposed_bytes = int64_t{8} << 20;

  /// Whether a gather of whole table rows of 16-byte units into a result of
  /// 8 MiB or more writes them with 16-byte streaming stores.
  bool stream_gather_units = true;

  /// Whether a gather of rows of whole 64-byte lines into a result of 8 MiB or
  /// more writes them with full-line streaming stores (vmath's gather_lines):
  /// skipping the read-for-ownership of the result's lines leaves the core's
  /// miss buffers to the scattered reads. Checked before stream_gather_units.
  bool stream_gather_lines = true;

  /// The settings for the CPU this process runs on: on AMD CPUs the staged
  /// tile 512 x 128 (512-byte source runs) and no 16-byte streaming of
  /// gathers; on others 64 x 1024 (long result rows, 256-byte source runs)
  /// and the 16-byte streaming.
  static CpuTuning for_this_cpu();
};

/// The settings in force, for_this_cpu() until set_cpu_tuning.
const CpuTuning& cpu_tuning();

/// Puts `t` in force for every later walk and returns the settings it
/// replaces. For the tests, between ops: a walk running on another thread may
/// read either.
CpuTuning set_cpu_tuning(const CpuTuning& t);

}  // namespace strata::detail
