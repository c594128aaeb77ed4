// SPDX-License-Identifier: MIT
// The public collectives (dist/process_group.hpp): validate, prepare the buffers on the
// caller's thread, and hand the collective to the engine through the backend of the
// tensor's device (MPI for the CPU, NCCL for CUDA).
#include <climits>
#include <sstream>

#include "dist/internal/group.hpp"
#include "raw/ops.hpp"
#include "raw/trace.hpp"

namespace strata::dist {

namespace detail {
namespace {

using strata::detail::fail;

std::string describe(std::string_view name, const RawTensor& x) {
  std::ostringstream os;
  os << name << " of " << dtype_name(x.dtype()) << x.shape();
  return os.str();
}

std::string_view reduction_text(Reduction op) {
  switch (op) {
    case Reduction::sum:
      return "sum";
    case Reduction::mean:
      return "mean";
    case Reduction::max:
      return "max";
  }
  return "?";
}

// The input as a contiguous tensor, checked: defined, on a device a backend serves, and
// with an element count MPI's int counts hold.
RawTensor prepared(const Tensor& x, std::string_view op) {
  if (!x.defined())
    fail<ValueError>(std::string("st::dist::") + std::string(op), "undefined tensor");
  const RawTensor in = raw::contiguous(x.raw());
  if (in.numel() > INT_MAX) {
    fail<ValueError>(std::string("st::dist::") + std::string(op), "a tensor of ", in.numel(),
                     " elements; one collective moves at most ", INT_MAX,
                     " (MPI's count is an int): split the tensor");
  }
  if (in.device().is_cuda() && !nccl_built()) {
    fail<DeviceError>(std::string("st::dist::") + std::string(op), "a tensor on ", in.device(),
                      ", but strata was built without NCCL (configure with the CUDA Toolkit's "
                      "NCCL present, -DSTRATA_NCCL=ON), or move it to the CPU");
  }
  return in;
}

void require_float_for_mean(Reduction op, DType t, std::string_view name) {
  if (op == Reduction::mean && !is_floating(t)) {
    fail<DTypeError>(std::string("st::dist::") + std::string(name), "mean of a ", dtype_name(t),
                     " tensor: mean needs f32 or f64 (use sum for integers and bools)");
  }
}

std::shared_ptr<Task> start(Group& g, Collective c) {
  // Values from other processes: a jit plan could not replay the exchange.
  raw::trace::forbid("st::dist::" + std::string(c.what));
  std::shared_ptr<Task> task;
  if (c.in.defined() && c.in.device().is_cuda()) {
#ifdef STRATA_HAS_NCCL
    task = nccl_task(g, std::move(c));
#endif
  } else {
    task = mpi_task(g, std::move(c));
  }
  return g.engine->submit(std::move(task));
}

Work submit(Group& g, Collective c) { return Work(start(g, std::move(c))); }

}  // namespace

std::shared_ptr<Task> all_reduce_into(const RawTensor& buffer, Reduction op,
                                      std::string_view name) {
  Group& g = group(name);
  Collective c;
  c.kind = Kind::all_reduce;
  c.op = op;
  c.in = buffer;
  c.out = buffer;
  c.check = g.check;
  c.what = describe("all_reduce(" + std::string(reduction_text(op)) + ")", buffer) + " (" +
           std::string(name) + ")";
  return start(g, std::move(c));
}

}  // namespace detail

using detail::Collective;
using detail::group;
using detail::Group;
using detail::Kind;

Tensor Work::wait() {
  if (!task_) strata::detail::fail<ValueError>("st::dist::Work::wait", "an empty handle");
  return Tensor(group("Work::wait").engine->wait(*task_));
}

bool Work::done() const {
  if (!task_) return false;
  return group("Work::done").engine->done(*task_);
}

Work all_reduce_async(const Tensor& x, Reduction op) {
  Group& g = group("all_reduce");
  Collective c;
  c.kind = Kind::all_reduce;
  c.op = op;
  c.in = detail::prepared(x, "all_reduce");
  detail::require_float_for_mean(op, c.in.dtype(), "all_reduce");
  c.out = raw::empty(c.in.shape(), c.in.dtype(), c.in.device(), "st::dist::all_reduce");
  c.check = g.check;
  c.what = detail::describe("all_reduce(" + std::string(detail::reduction_text(op)) + ")", c.in);
  return detail::submit(g, std::move(c));
}

Tensor all_reduce(const Tensor& x, Reduction op) { return all_reduce_async(x, op).wait(); }

Work broadcast_async(const Tensor& x, int root) {
  Group& g = group("broadcast");
  if (root < 0 || root >= g.world) {
    strata::detail::fail<ValueError>("st::dist::broadcast", "root ", root, " is not a rank (0 to ",
                                     g.world - 1, ")");
  }
  Collective c;
  c.kind = Kind::broadcast;
  c.root = root;
  c.in = detail::prepared(x, "broadcast");
  c.out = raw::empty(c.in.shape(), c.in.dtype(), c.in.device(), "st::dist::broadcast");
  if (g.rank == root) raw::copy_(c.out, c.in);
  c.check = true;  // always: broadcast is how parameters are first shared
  c.what = detail::describe("broadcast(root " + std::to_string(root) + ")", c.in);
  return detail::submit(g, std::move(c));
}

Tensor broadcast(const Tensor& x, int root) { return broadcast_async(x, root).wait(); }

Work all_gather_async(const Tensor& x) {
  Group& g = group("all_gather");
  Collective c;
  c.kind = Kind::all_gather;
  c.in = detail::prepared(x, "all_gather");
  Shape shape{int64_t(g.world)};
  for (int64_t d : c.in.shape()) shape.push_back(d);
  c.out = raw::empty(shape, c.in.dtype(), c.in.device(), "st::dist::all_gather");
  c.check = g.check;
  c.what = detail::describe("all_gather", c.in);
  return detail::submit(g, std::move(c));
}

Tensor all_gather(const Tensor& x) { return all_gather_async(x).wait(); }

Work reduce_scatter_async(const Tensor& x, Reduction op) {
  Group& g = group("reduce_scatter");
  Collective c;
  c.kind = Kind::reduce_scatter;
  c.op = op;
  c.in = detail::prepared(x, "reduce_scatter");
  detail::require_float_for_mean(op, c.in.dtype(), "reduce_scatter");
  if (c.in.ndim() == 0 || c.in.shape()[0] % g.world != 0) {
    strata::detail::fail<ShapeError>("st::dist::reduce_scatter", "a tensor of shape ", c.in.shape(),
                                     ": its first axis must split into ", g.world,
                                     " equal parts (one per rank)");
  }
  Shape shape = c.in.shape();
  shape[0] /= g.world;
  c.out = raw::empty(shape, c.in.dtype(), c.in.device(), "st::dist::reduce_scatter");
  c.check = g.check;
  c.what =
      detail::describe("reduce_scatter(" + std::string(detail::reduction_text(op)) + ")", c.in);
  return detail::submit(g, std::move(c));
}

Tensor reduce_scatter(const Tensor& x, Reduction op) { return reduce_scatter_async(x, op).wait(); }

Work barrier_async() {
  Group& g = group("barrier");
  Collective c;
  c.kind = Kind::barrier;
  c.check = g.check;
  c.what = "barrier";
  return detail::submit(g, std::move(c));
}

void barrier() { barrier_async().wait(); }

}  // namespace strata::dist
