// SPDX-License-Identifier: MIT
// The MPI backend: each collective on CPU tensors as a Task of non-blocking MPI calls
// (MPI_Iallreduce, MPI_Ibcast, ...), polled by the engine thread with MPI_Test; and the
// header exchange that checks shapes and dtypes across ranks first.
#include <climits>
#include <optional>
#include <sstream>

#include "dist/internal/group.hpp"
#include "raw/ops.hpp"

namespace strata::dist::detail {

// --- MPI helpers -------------------------------------------------------------------------

void mpi_failed(int rc, std::string_view call, std::string_view what, int rank) {
  char text[MPI_MAX_ERROR_STRING] = {};
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw DistError("st::dist::" + std::string(what) + " on rank " + std::to_string(rank) + ": " +
                  std::string(call) + " failed: " + std::string(text, std::size_t(len)));
}

bool mpi_test(MPI_Request& request, std::string_view what, int rank) {
  int flag = 0;
  if (int rc = MPI_Test(&request, &flag, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
    mpi_failed(rc, "MPI_Test", what, rank);
  }
  return flag != 0;
}

void* data_of(const RawTensor& t) {
  if (!t.defined() || !t.storage()->data()) return nullptr;
  return static_cast<char*>(t.storage()->data()) + t.offset() * int64_t(dtype_size(t.dtype()));
}

namespace {

MPI_Datatype mpi_type(DType t) {
  switch (t) {
    case DType::b8:
      return MPI_C_BOOL;
    case DType::i32:
      return MPI_INT32_T;
    case DType::i64:
      return MPI_INT64_T;
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
  }
  return MPI_DATATYPE_NULL;
}

// sum and max of bools are the logical or; mean is a sum divided afterwards.
MPI_Op mpi_op(Reduction op, DType t) {
  if (t == DType::b8) return MPI_LOR;
  return op == Reduction::max ? MPI_MAX : MPI_SUM;
}

// --- headers -----------------------------------------------------------------------------

const char* kind_name(int64_t k) {
  switch (Kind(k)) {
    case Kind::all_reduce:
      return "all_reduce";
    case Kind::broadcast:
      return "broadcast";
    case Kind::all_gather:
      return "all_gather";
    case Kind::reduce_scatter:
      return "reduce_scatter";
    case Kind::barrier:
      return "barrier";
  }
  return "?";
}

const char* reduction_name(int64_t op) {
  switch (Reduction(op)) {
    case Reduction::sum:
      return "sum";
    case Reduction::mean:
      return "mean";
    case Reduction::max:
      return "max";
  }
  return "?";
}

// Slots: kind, op, root, dtype, ndim, dims..., hash of every dim.
std::string call_of(const int64_t* h) {
  std::ostringstream os;
  os << kind_name(h[0]);
  if (Kind(h[0]) == Kind::all_reduce || Kind(h[0]) == Kind::reduce_scatter) {
    os << "(" << reduction_name(h[1]) << ")";
  } else if (Kind(h[0]) == Kind::broadcast) {
    os << "(root " << h[2] << ")";
  }
  return os.str();
}

std::string tensor_of(const int64_t* h) {
  std::ostringstream os;
  os << dtype_name(DType(h[3])) << "[";
  for (int64_t d = 0; d < h[4]; ++d) {
    if (d) os << ", ";
    if (d == kHeaderDims) {
      os << "...";
      break;
    }
    os << h[5 + d];
  }
  os << "]";
  return os.str();
}

bool same_call(const int64_t* a, const int64_t* b) {
  return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}
bool same_tensor(const int64_t* a, const int64_t* b) {
  for (int k = 3; k < kHeaderSlots; ++k) {
    if (a[k] != b[k]) return false;
  }
  return true;
}

}  // namespace

Header make_header(const Collective& c) {
  Header h{};
  h.fill(-1);
  h[0] = int64_t(c.kind);
  h[1] = c.kind == Kind::all_reduce || c.kind == Kind::reduce_scatter ? int64_t(c.op) : -1;
  h[2] = c.kind == Kind::broadcast ? c.root : -1;
  h[3] = c.in.defined() ? int64_t(c.in.dtype()) : -1;
  const int64_t ndim = c.in.defined() ? c.in.ndim() : 0;
  h[4] = ndim;
  uint64_t hash = 1469598103934665603ull;  // FNV-1a over every dim
  for (int64_t d = 0; d < ndim; ++d) {
    const int64_t n = c.in.shape()[d];
    if (d < kHeaderDims) h[std::size_t(5 + d)] = n;
    hash = (hash ^ uint64_t(n)) * 1099511628211ull;
  }
  h[kHeaderSlots - 1] = int64_t(hash >> 1);
  return h;
}

HeaderExchange::HeaderExchange(const Collective& c, MPI_Comm comm, int world, int rank)
    : mine_(make_header(c)),
      all_(std::size_t(world) * kHeaderSlots),
      comm_(comm),
      world_(world),
      rank_(rank),
      what_(c.what) {}

void HeaderExchange::start() {
  if (int rc = MPI_Iallgather(mine_.data(), kHeaderSlots, MPI_INT64_T, all_.data(), kHeaderSlots,
                              MPI_INT64_T, comm_, &request_);
      rc != MPI_SUCCESS) {
    mpi_failed(rc, "MPI_Iallgather (the header exchange)", what_, rank_);
  }
}

bool HeaderExchange::test() {
  if (!mpi_test(request_, what_, rank_)) return false;
  auto at = [&](int r) { return all_.data() + std::size_t(r) * kHeaderSlots; };
  // Every rank sees the same headers, so every rank throws the same message.
  for (int r = 1; r < world_; ++r) {
    if (!same_call(at(r), at(0))) {
      throw ConsistentFailure("st::dist::" + what_ + ": rank " + std::to_string(r) + " called " +
                              call_of(at(r)) + " where rank 0 called " + call_of(at(0)) +
                              ": every rank must call the same collectives in the same order");
    }
  }
  // broadcast compares with the root, the others with rank 0.
  const int ref = Kind(at(0)[0]) == Kind::broadcast ? int(at(0)[2]) : 0;
  std::string diffs;
  int n_diffs = 0;
  for (int r = 0; r < world_; ++r) {
    if (r == ref || same_tensor(at(r), at(ref))) continue;
    if (++n_diffs <= 3) {
      diffs += (diffs.empty() ? "" : ", ") + std::string("rank ") + std::to_string(r) + " " +
               tensor_of(at(r));
    }
  }
  if (n_diffs > 0) {
    if (n_diffs > 3) diffs += " and " + std::to_string(n_diffs - 3) + " more";
    throw ConsistentFailure("st::dist::" + what_ + ": the ranks' tensors differ: rank " +
                            std::to_string(ref) + " passed " + tensor_of(at(ref)) + ", " + diffs +
                            " (every rank must pass the same shape and dtype)");
  }
  return true;
}

// --- the MPI task ------------------------------------------------------------------------

namespace {

class MpiTask final : public Task {
 public:
  MpiTask(Group& g, Collective c)
      : Task(c.what), c_(std::move(c)), comm_(g.comm), rank_(g.rank), world_(g.world) {
    if (c_.check) {
      header_.emplace(c_, comm_, world_, rank_);
      phase_ = Phase::header;
    }
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
        phase_ = Phase::wait;
        return false;
      case Phase::wait:
        return mpi_test(request_, what(), rank_);
    }
    return false;
  }
  bool issued_all() const override { return phase_ == Phase::wait; }
  RawTensor finish() override;

 private:
  void issue();
  enum class Phase { header, header_wait, start, wait };
  Collective c_;
  MPI_Comm comm_;
  int rank_, world_;
  std::optional<HeaderExchange> header_;
  Phase phase_ = Phase::start;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

void MpiTask::issue() {
  const int64_t n = c_.in.defined() ? c_.in.numel() : 0;
  const MPI_Datatype type = c_.in.defined() ? mpi_type(c_.in.dtype()) : MPI_DATATYPE_NULL;
  const int count = int(n);  // checked against INT_MAX by the public functions
  void* in = data_of(c_.in);
  void* out = data_of(c_.out);
  int rc = MPI_SUCCESS;
  const char* call = "";
  switch (c_.kind) {
    case Kind::all_reduce:
      call = "MPI_Iallreduce";
      rc = MPI_Iallreduce(in == out ? MPI_IN_PLACE : in, out, count, type,
                          mpi_op(c_.op, c_.in.dtype()), comm_, &request_);
      break;
    case Kind::broadcast:
      call = "MPI_Ibcast";
      rc = MPI_Ibcast(out, count, type, c_.root, comm_, &request_);
      break;
    case Kind::all_gather:
      call = "MPI_Iallgather";
      rc = MPI_Iallgather(in, count, type, out, count, type, comm_, &request_);
      break;
    case Kind::reduce_scatter:
      call = "MPI_Ireduce_scatter_block";
      rc = MPI_Ireduce_scatter_block(in, out, count / world_, type, mpi_op(c_.op, c_.in.dtype()),
                                     comm_, &request_);
      break;
    case Kind::barrier:
      call = "MPI_Ibarrier";
      rc = MPI_Ibarrier(comm_, &request_);
      break;
  }
  if (rc != MPI_SUCCESS) mpi_failed(rc, call, what(), rank_);
}

RawTensor MpiTask::finish() {
  if (c_.op == Reduction::mean &&
      (c_.kind == Kind::all_reduce || c_.kind == Kind::reduce_scatter) && c_.out.numel() > 0) {
    raw::binary_(BinaryOp::div, c_.out,
                 raw::full(c_.out.shape(), double(world_), c_.out.dtype(), c_.out.device()));
  }
  return c_.out;
}

}  // namespace

std::shared_ptr<Task> mpi_task(Group& g, Collective c) {
  return std::make_shared<MpiTask>(g, std::move(c));
}

}  // namespace strata::dist::detail
