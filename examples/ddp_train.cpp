// SPDX-License-Identifier: MIT
// Data-parallel training of an MLP classifier with st::dist::DataParallel. Launched by
// mpirun, every process (rank) holds the whole model and takes its own part of each global
// batch; DataParallel averages the gradients over the ranks (starting each bucket's
// all-reduce while the backward pass is still running), so every rank takes the same Adam
// step. At the end rank 0 trains the same model again in one process on the whole global
// batches and checks that the parameters agree (exit 1 otherwise).
//   mpirun -np 2 ddp_train [--small]        (make demo-dist)
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include <dist/dist.hpp>
#include <strata.hpp>

namespace st = strata;

// Points in [-1, 1]^2 labelled by the quadrant rule x0 * x1 > 0 (XOR: needs a hidden layer).
st::Tensor points(int64_t n) { return st::rand({n, 2}, 7, st::f64) * 2.0 - 1.0; }
st::Tensor labels(const st::Tensor& x) {
  return (x.ix(st::all, 0) * x.ix(st::all, 1) > 0.0).to(st::i64);
}

int main(int argc, char** argv) {
  st::dist::init();
  const bool small = argc > 1 && std::strcmp(argv[1], "--small") == 0;
  const int rank = st::dist::rank(), world = st::dist::world_size();
  const int steps = small ? 30 : 300;
  const int64_t global_batch = 64, n = 1024;
  const st::Tensor x = points(n), y = labels(x);
  const st::nn::MLP model({2, 32, 32, 2}, st::nn::Activation::tanh, st::f64);
  auto loss_on = [&](const st::Tensor& xb, const st::Tensor& yb) {
    return [&model, xb, yb](const auto& p) { return st::nn::cross_entropy(model(p, xb), yb); };
  };
  if (rank == 0) {
    std::printf("ddp_train: %d ranks, global batch %lld (%lld rows per rank), %d steps\n", world,
                (long long)global_batch, (long long)(global_batch / world), steps);
  }

  // Data parallel: rank 0's initial parameters everywhere, each rank its part of each batch.
  st::nn::Params params = model.init(/*seed=*/rank == 0 ? 1 : 1000 + rank);
  st::dist::DataParallel ddp(params);
  st::nn::Adam opt(0.01);
  st::dist::ShardedBatches batches(x, y, global_batch, /*seed=*/2, true, /*drop_last=*/true);
  double step_seconds = 0, hidden = 0;
  for (int step = 1; step <= steps; ++step) {
    auto b = batches.next();
    if (!b) b = batches.next();  // the next epoch
    const auto start = std::chrono::steady_clock::now();
    auto [loss, grads] = ddp.value_and_grad(loss_on(b->x, b->y), params);
    opt.step(params, grads);
    step_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    hidden += ddp.last_step().hidden_fraction();
    const double global_loss = st::dist::all_reduce(loss, st::dist::Reduction::mean).item<double>();
    if (rank == 0 && (step % (steps / 5) == 0 || step == 1)) {
      std::printf("step %4d  loss %.4f (mean over the ranks)\n", step, global_loss);
    }
  }
  const double accuracy = st::nn::accuracy(model(params, x), y);

  // The same training in one process, on the whole global batches (rank 0 only).
  int ok = 1;
  if (rank == 0) {
    st::nn::Params alone = model.init(1);
    st::nn::Adam opt1(0.01);
    st::nn::BatchIterator global(x, y, global_batch, 2, true, true);
    for (int step = 1; step <= steps; ++step) {
      auto b = global.next();
      if (!b) b = global.next();
      auto [loss, grads] = st::value_and_grad(loss_on(b->x, b->y), alone);
      opt1.step(alone, grads);
    }
    double worst = 0;
    for (const auto& [name, t] : alone) {
      const double scale = st::max(st::abs(t)).item<double>();
      worst = std::max(worst, st::max(st::abs(params.at(name) - t)).item<double>() / scale);
    }
    ok = worst < 1e-6;
    std::printf(
        "training accuracy %.3f; %.2f ms per step, %.0f%% of the all-reduce time hidden "
        "behind the backward pass\n",
        accuracy, 1e3 * step_seconds / steps, 100 * hidden / steps);
    std::printf(
        "final parameters %s a single-process run on the same global batches "
        "(largest relative difference %.1e)\n",
        ok ? "equal" : "DIFFER FROM", worst);
  }
  ok = st::dist::broadcast(st::full({}, ok, st::i32), 0).item<int32_t>();
  st::dist::finalize();
  return ok ? 0 : 1;
}
