// SPDX-License-Identifier: MIT
#pragma once
/// The process group: every process of an MPI job (mpirun -np N), its rank, and the
/// collectives on tensors (torch.distributed's names and meanings). CPU tensors go through
/// MPI (OpenMPI), CUDA tensors through NCCL (when the build has it); there is no home-made
/// collective.
///
/// Every collective is issued to one communication thread in call order, which starts the
/// non-blocking MPI or NCCL call and polls it until it completes or its timeout passes, so a
/// rank that died, hung or skipped a collective turns into st::DistError on the others
/// instead of a hang (docs/DISTRIBUTED.md, "Faults"). As with MPI, every rank must call the
/// same collectives in the same order.
///
///   st::dist::init();                                   // from mpirun's environment
///   st::Tensor s = st::dist::all_reduce(x);             // the sum over ranks
///   st::dist::Work w = st::dist::all_reduce_async(x, st::dist::Reduction::mean);
///   ...;  st::Tensor m = w.wait();
#include <chrono>
#include <memory>
#include <optional>

#include "diff/tensor.hpp"
#include "dist/error.hpp"

/// Distributed training: the process group, collectives, data parallelism, sharded vmap.
namespace strata::dist {

/// How the process group behaves (st::dist::init).
struct Options {
  /// How long one collective may take before it fails with DistError; unset: the
  /// environment's STRATA_DIST_TIMEOUT (seconds) when set, else 300 s.
  std::optional<std::chrono::milliseconds> timeout{};
  /// Exchange each collective's shape and dtype first and fail (on every rank, with the same
  /// DistError) when they differ across ranks; unset: STRATA_DIST_CHECK (1 on, anything else
  /// off) when set, else on in a debug build of strata (no NDEBUG) and off in a release one.
  /// broadcast always checks (it is how parameters are first shared).
  std::optional<bool> check_collectives{};
};

/// Joins the MPI job the launcher started (mpirun / mpiexec; one process alone is a job of
/// one): initialises MPI unless the program already did, and starts the communication
/// thread. Calling it again does nothing. Throws DistError when MPI cannot give the thread
/// support the communication thread needs (MPI_THREAD_SERIALIZED).
void init(const Options& options = {});
/// Whether init() has run and finalize() has not.
bool is_initialized();
/// Leaves the job: stops the communication thread and finalises MPI (when init() initialised
/// it). After a collective failed, other ranks may be stuck where MPI_Finalize would wait
/// for them forever, so finalize then ends the whole job with MPI_Abort (exit status 1)
/// instead. Runs at exit when the program did not call it.
void finalize();

/// This process's rank, 0 .. world_size() - 1 (DistError before init()).
int rank();
/// The number of processes in the job.
int world_size();
/// This process's rank among those on the same host (to pick a GPU: cuda(local_rank())).
int local_rank();
/// Changes the timeout of the collectives started from now on; must be positive
/// (ValueError).
void set_timeout(std::chrono::milliseconds timeout);
/// The current timeout of a collective.
std::chrono::milliseconds timeout();
/// Switches the shape and dtype exchange before every collective on or off (Options).
void set_check_collectives(bool on);
/// Whether this build has the NCCL backend (CUDA tensors); the MPI one is always there.
bool nccl_built();

/// How all_reduce and reduce_scatter combine the ranks' tensors. On bool tensors, sum and
/// max are the logical or; mean needs a float dtype (DTypeError).
enum class Reduction {
  sum,   ///< the elementwise sum
  mean,  ///< the sum divided by world_size()
  max    ///< the elementwise maximum
};

namespace detail {
class Task;
}  // namespace detail

/// A collective started by one of the *_async calls; wait() gives its result.
class Work {
 public:
  /// An empty handle (wait() throws ValueError).
  Work() = default;
  /// Blocks until the collective has completed and returns its result (for barrier, an
  /// undefined tensor). Throws DistError when it failed or timed out. May be called again:
  /// it returns the same result.
  Tensor wait();
  /// Whether the collective has completed or failed (wait() then returns at once).
  bool done() const;
  /// Wraps a started task (made by the collectives).
  explicit Work(std::shared_ptr<detail::Task> task) : task_(std::move(task)) {}

 private:
  std::shared_ptr<detail::Task> task_;
};

/// x combined elementwise over every rank (MPI_Allreduce / ncclAllReduce): every rank gets
/// the result. Every rank passes a tensor of one shape and dtype; any layout.
Tensor all_reduce(const Tensor& x, Reduction op = Reduction::sum);
/// all_reduce, started in the background.
Work all_reduce_async(const Tensor& x, Reduction op = Reduction::sum);
/// Rank root's x on every rank (MPI_Bcast / ncclBroadcast); the others pass a tensor of the
/// same shape and dtype (its values are ignored), checked on every call: a mismatch is a
/// DistError on every rank naming the ranks that differ. root in [0, world_size())
/// (ValueError).
Tensor broadcast(const Tensor& x, int root = 0);
/// broadcast, started in the background.
Work broadcast_async(const Tensor& x, int root = 0);
/// Every rank's x stacked along a new first axis, [world_size(), ...x.shape()], in rank order
/// (MPI_Allgather / ncclAllGather); every rank passes one shape and dtype.
Tensor all_gather(const Tensor& x);
/// all_gather, started in the background.
Work all_gather_async(const Tensor& x);
/// The ranks' x combined elementwise, then split along axis 0 into world_size() equal parts:
/// rank r gets part r (MPI_Reduce_scatter_block / ncclReduceScatter). x.shape()[0] must be a
/// multiple of world_size() (ShapeError).
Tensor reduce_scatter(const Tensor& x, Reduction op = Reduction::sum);
/// reduce_scatter, started in the background.
Work reduce_scatter_async(const Tensor& x, Reduction op = Reduction::sum);
/// Returns when every rank has called it (MPI_Barrier).
void barrier();
/// barrier, started in the background.
Work barrier_async();

}  // namespace strata::dist
