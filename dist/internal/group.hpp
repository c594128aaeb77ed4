// SPDX-License-Identifier: MIT
#pragma once
// The process group's state and the pieces the MPI and NCCL tasks share (not installed:
// it includes mpi.h, which users of strata never need).
#include <mpi.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "dist/internal/engine.hpp"

namespace strata::dist::detail {

struct NcclComm;  // dist/nccl.cpp: a communicator on one CUDA device, made on first use

/// The process group of this process (one per process, made by init()).
struct Group {
  MPI_Comm comm = MPI_COMM_NULL;   ///< a duplicate of MPI_COMM_WORLD, errors returned
  int rank = 0;                    ///< this process's rank
  int world = 1;                   ///< the number of ranks
  int local_rank = 0;              ///< the rank among those on this host
  bool owns_mpi = false;           ///< init() initialised MPI (so finalize() finalises it)
  bool check = false;              ///< exchange headers before every collective
  std::shared_ptr<NcclComm> nccl;  ///< the NCCL communicator, once a CUDA collective ran
  std::unique_ptr<Engine> engine;  ///< the communication thread
};

/// The group, or DistError naming `op` when init() has not run.
Group& group(std::string_view op);

/// The collectives, as the header exchange names them.
enum class Kind : int64_t { all_reduce, broadcast, all_gather, reduce_scatter, barrier };

/// One collective, as the public functions prepare it for a backend.
struct Collective {
  Kind kind = Kind::barrier;      ///< which collective
  Reduction op = Reduction::sum;  ///< for all_reduce and reduce_scatter
  int root = 0;                   ///< for broadcast
  RawTensor in;                   ///< the contiguous input (undefined for barrier)
  RawTensor out;                  ///< the output buffer (the same storage as `in` in place)
  bool check = false;             ///< exchange headers first
  std::string what;               ///< "all_reduce(sum) of f32[3, 4]", for messages
};

/// The header a rank sends before a checked collective: kind, op, root, dtype, rank of the
/// shape, its first kHeaderDims dims and a hash of all of them.
inline constexpr int kHeaderDims = 10;
/// The int64 slots of a header.
inline constexpr int kHeaderSlots = 6 + kHeaderDims;
/// A header as MPI sends it.
using Header = std::array<int64_t, kHeaderSlots>;
/// The header of a collective.
Header make_header(const Collective& c);

/// The MPI_Iallgather of every rank's header, then the check: a Task phase shared by the MPI
/// and NCCL tasks.
class HeaderExchange {
 public:
  /// Exchanges c's header on comm.
  HeaderExchange(const Collective& c, MPI_Comm comm, int world, int rank);
  /// Starts the exchange.
  void start();
  /// True once every header has arrived and they agree; throws ConsistentFailure (naming
  /// the ranks that differ) when they do not, DistError when MPI fails.
  bool test();

 private:
  Header mine_;
  std::vector<int64_t> all_;
  MPI_Comm comm_;
  int world_, rank_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::string what_;
};

/// Throws DistError for an MPI error code rc returned by `call` during `what`.
[[noreturn]] void mpi_failed(int rc, std::string_view call, std::string_view what, int rank);
/// Tests an MPI request: true once complete (DistError for an error).
bool mpi_test(MPI_Request& request, std::string_view what, int rank);
/// The address of element (0, ...) of a contiguous tensor (nullptr when it has none).
void* data_of(const RawTensor& t);

/// Starts an all_reduce of `buffer` (contiguous) in place, named `name` in messages: what
/// st::dist::DataParallel's buckets use. The task's timestamps say when it ran.
std::shared_ptr<Task> all_reduce_into(const RawTensor& buffer, Reduction op, std::string_view name);

/// The task running c through MPI (CPU tensors).
std::shared_ptr<Task> mpi_task(Group& g, Collective c);
#ifdef STRATA_HAS_NCCL
/// The task running c through NCCL on the tensors' CUDA device (it first queues the
/// communicator's creation when this is the first CUDA collective).
std::shared_ptr<Task> nccl_task(Group& g, Collective c);
/// Frees the NCCL communicator (at finalize).
void destroy_nccl(Group& g);
#endif

}  // namespace strata::dist::detail
