// SPDX-License-Identifier: MIT
// The NCCL backend (built when CMake finds nccl.h and libnccl with the CUDA backend):
// collectives on CUDA tensors. The communicator is made on the first CUDA collective, from
// a unique id that rank 0 draws and broadcasts over MPI (as llm.c does), in NCCL's
// non-blocking mode so that neither its creation nor a collective can block the engine
// thread: each is polled (ncclCommGetAsyncError, cudaEventQuery) like an MPI request, and a
// timeout aborts the communicator (ncclCommAbort), which ends its kernels.
//
// The communicator's stream is a blocking stream, so it orders itself after the work the
// CUDA backend queued on the legacy default stream (the inputs are ready) and that work's
// later kernels after it (the outputs are not read early).
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstring>
#include <optional>

#include "dist/internal/group.hpp"

namespace strata::dist::detail {

/// A communicator on one CUDA device.
struct NcclComm {
  int device = 0;                 ///< the CUDA device it was made on
  ncclComm_t comm = nullptr;      ///< valid once `ready`
  cudaStream_t stream = nullptr;  ///< where its collectives run
  bool ready = false;             ///< creation completed
  bool aborted = false;           ///< ncclCommAbort ran (after a failure)
};

namespace {

[[noreturn]] void nccl_failed(ncclResult_t rc, const char* call, std::string_view what, int rank,
                              ncclComm_t comm) {
  std::string msg = "st::dist::" + std::string(what) + " on rank " + std::to_string(rank) + ": " +
                    call + " failed: " + ncclGetErrorString(rc);
  if (comm) {
    if (const char* last = ncclGetLastError(comm); last && *last)
      msg += std::string(" (") + last + ")";
  }
  throw DistError(msg);
}

[[noreturn]] void cuda_failed(cudaError_t rc, const char* call, std::string_view what, int rank) {
  throw DistError("st::dist::" + std::string(what) + " on rank " + std::to_string(rank) + ": " +
                  call + " failed: " + cudaGetErrorString(rc));
}

void check_cuda(cudaError_t rc, const char* call, std::string_view what, int rank) {
  if (rc != cudaSuccess) cuda_failed(rc, call, what, rank);
}

// True once the communicator's last non-blocking call has finished (ncclInProgress until).
bool nccl_settled(NcclComm& c, std::string_view what, int rank) {
  ncclResult_t state = ncclSuccess;
  if (ncclResult_t rc = ncclCommGetAsyncError(c.comm, &state); rc != ncclSuccess) {
    nccl_failed(rc, "ncclCommGetAsyncError", what, rank, c.comm);
  }
  if (state == ncclInProgress) return false;
  if (state != ncclSuccess) nccl_failed(state, "an NCCL collective", what, rank, c.comm);
  return true;
}

void abort_comm(NcclComm& c) {
  if (c.comm && !c.aborted) {
    ncclCommAbort(c.comm);
    c.aborted = true;
  }
}

ncclDataType_t nccl_type(DType t) {
  switch (t) {
    case DType::b8:
      return ncclUint8;
    case DType::i32:
      return ncclInt32;
    case DType::i64:
      return ncclInt64;
    case DType::f32:
      return ncclFloat32;
    case DType::f64:
      return ncclFloat64;
  }
  return ncclUint8;
}

// sum and max of bools are the logical or: the max of bytes that are 0 or 1.
ncclRedOp_t nccl_op(Reduction op, DType t) {
  if (t == DType::b8 || op == Reduction::max) return ncclMax;
  return op == Reduction::mean ? ncclAvg : ncclSum;
}

/// Creates the communicator: the unique id over MPI, then ncclCommInitRankConfig.
class NcclInitTask final : public Task {
 public:
  NcclInitTask(Group& g, std::shared_ptr<NcclComm> c)
      : Task("NCCL communicator creation on cuda:" + std::to_string(c->device)),
        c_(std::move(c)),
        mpi_(g.comm),
        rank_(g.rank),
        world_(g.world) {}

  bool progress() override {
    switch (phase_) {
      case Phase::id: {
        if (rank_ == 0) {
          if (ncclResult_t rc = ncclGetUniqueId(&id_); rc != ncclSuccess) {
            nccl_failed(rc, "ncclGetUniqueId", what(), rank_, nullptr);
          }
        }
        if (int rc = MPI_Ibcast(&id_, int(sizeof id_), MPI_BYTE, 0, mpi_, &request_);
            rc != MPI_SUCCESS) {
          mpi_failed(rc, "MPI_Ibcast (the NCCL unique id)", what(), rank_);
        }
        phase_ = Phase::id_wait;
        return false;
      }
      case Phase::id_wait: {
        if (!mpi_test(request_, what(), rank_)) return false;
        check_cuda(cudaSetDevice(c_->device), "cudaSetDevice", what(), rank_);
        check_cuda(cudaStreamCreate(&c_->stream), "cudaStreamCreate", what(), rank_);
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        const ncclResult_t rc = ncclCommInitRankConfig(&c_->comm, world_, id_, rank_, &config);
        if (rc != ncclSuccess && rc != ncclInProgress) {
          nccl_failed(rc, "ncclCommInitRankConfig", what(), rank_, c_->comm);
        }
        phase_ = Phase::init_wait;
        return false;
      }
      case Phase::init_wait:
        if (!nccl_settled(*c_, what(), rank_)) return false;
        c_->ready = true;
        phase_ = Phase::done;
        return true;
      case Phase::done:
        return true;
    }
    return false;
  }
  // Later collectives need the communicator: nothing starts until it exists.
  bool issued_all() const override { return phase_ == Phase::done; }
  void abandon() override { abort_comm(*c_); }

 private:
  enum class Phase { id, id_wait, init_wait, done };
  std::shared_ptr<NcclComm> c_;
  MPI_Comm mpi_;
  int rank_, world_;
  ncclUniqueId id_{};
  MPI_Request request_ = MPI_REQUEST_NULL;
  Phase phase_ = Phase::id;
};

/// One collective on CUDA tensors.
class NcclTask final : public Task {
 public:
  NcclTask(Group& g, Collective c, std::shared_ptr<NcclComm> comm)
      : Task(c.what), c_(std::move(c)), comm_(std::move(comm)), rank_(g.rank), world_(g.world) {
    if (c_.check) {
      header_.emplace(c_, g.comm, world_, rank_);
      phase_ = Phase::header;
    }
  }
  ~NcclTask() override {
    if (event_) cudaEventDestroy(event_);
  }

  bool progress() override {
    switch (phase_) {
      case Phase::header:
        header_->start();
        phase_ = Phase::header_wait;
        return false;
      case Phase::header_wait:
        if (!header_->test()) return false;
        phase_ = Phase::start;
        [[fallthrough]];
      case Phase::start:
        issue();
        phase_ = Phase::enqueue_wait;
        [[fallthrough]];
      case Phase::enqueue_wait:
        if (!nccl_settled(*comm_, what(), rank_)) return false;
        check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate",
                   what(), rank_);
        check_cuda(cudaEventRecord(event_, comm_->stream), "cudaEventRecord", what(), rank_);
        phase_ = Phase::wait;
        return false;
      case Phase::wait: {
        const cudaError_t q = cudaEventQuery(event_);
        if (q == cudaSuccess) return true;
        if (q != cudaErrorNotReady) cuda_failed(q, "cudaEventQuery", what(), rank_);
        nccl_settled(*comm_, what(), rank_);  // throws on an asynchronous NCCL error
        return false;
      }
    }
    return false;
  }
  bool issued_all() const override { return phase_ == Phase::wait; }
  void abandon() override { abort_comm(*comm_); }
  RawTensor finish() override { return c_.out; }

 private:
  void issue();
  enum class Phase { header, header_wait, start, enqueue_wait, wait };
  Collective c_;
  std::shared_ptr<NcclComm> comm_;
  int rank_, world_;
  std::optional<HeaderExchange> header_;
  Phase phase_ = Phase::start;
  cudaEvent_t event_ = nullptr;
};

void NcclTask::issue() {
  check_cuda(cudaSetDevice(comm_->device), "cudaSetDevice", what(), rank_);
  const std::size_t n = std::size_t(c_.in.numel());
  const ncclDataType_t type = nccl_type(c_.in.dtype());
  void* in = data_of(c_.in);
  void* out = data_of(c_.out);
  ncclResult_t rc = ncclSuccess;
  const char* call = "";
  switch (c_.kind) {
    case Kind::all_reduce:
      call = "ncclAllReduce";
      rc = ncclAllReduce(in, out, n, type, nccl_op(c_.op, c_.in.dtype()), comm_->comm,
                         comm_->stream);
      break;
    case Kind::broadcast:
      call = "ncclBroadcast";
      rc = ncclBroadcast(out, out, n, type, c_.root, comm_->comm, comm_->stream);
      break;
    case Kind::all_gather:
      call = "ncclAllGather";
      rc = ncclAllGather(in, out, n, type, comm_->comm, comm_->stream);
      break;
    case Kind::reduce_scatter:
      call = "ncclReduceScatter";
      rc = ncclReduceScatter(in, out, n / std::size_t(world_), type, nccl_op(c_.op, c_.in.dtype()),
                             comm_->comm, comm_->stream);
      break;
    case Kind::barrier:
      throw DistError("st::dist::barrier: not a CUDA collective");  // never built: no tensor
  }
  if (rc != ncclSuccess && rc != ncclInProgress) nccl_failed(rc, call, what(), rank_, comm_->comm);
}

}  // namespace

std::shared_ptr<Task> nccl_task(Group& g, Collective c) {
  const int device = c.in.device().index();
  if (!g.nccl) {
    g.nccl = std::make_shared<NcclComm>();
    g.nccl->device = device;
    g.engine->submit(std::make_shared<NcclInitTask>(g, g.nccl));
  } else if (g.nccl->device != device) {
    strata::detail::fail<DeviceError>(
        "st::dist::" + c.what, "a tensor on cuda:", device,
        ", but this rank's NCCL communicator is on cuda:", g.nccl->device,
        " (one GPU per rank: the device of its first CUDA collective)");
  }
  return std::make_shared<NcclTask>(g, std::move(c), g.nccl);
}

void destroy_nccl(Group& g) {
  if (!g.nccl) return;
  NcclComm& c = *g.nccl;
  if (c.comm && !c.aborted) {
    // The engine has stopped and every collective completed: destroying cannot block.
    ncclCommDestroy(c.comm);
  }
  if (c.stream) cudaStreamDestroy(c.stream);
  g.nccl.reset();
}

}  // namespace strata::dist::detail
