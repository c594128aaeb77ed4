// SPDX-License-Identifier: MIT
// GPU workloads (built with the CUDA backend; registered only when a device
// exists): each body ends with cudaDeviceSynchronize, so the time is the
// device's. Peers run in the same program: cuBLAS called directly for matmul,
// and a plain device-to-device copy moving the same bytes (read + written)
// for the bandwidth-bound elementwise ops. PyTorch (CUDA) times every row
// under the same name in bench/peers_torch.py. bench/gpu_check.sh runs them
// all: strata_bench --filter cuda_.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench.hpp"

namespace bench {
namespace {

namespace raw = strata::raw;

void sync() {
  if (cudaDeviceSynchronize() != cudaSuccess) throw std::runtime_error("cudaDeviceSynchronize");
}

/// A device buffer freed with its last owner.
std::shared_ptr<void> device_buffer(std::size_t bytes) {
  void* p = nullptr;
  if (cudaMalloc(&p, bytes) != cudaSuccess) throw std::runtime_error("cudaMalloc");
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

/// Copies bytes/2 device to device: `bytes` read + written in all.
Peer copy_peer(double bytes) {
  return {"d2d_copy", [bytes] {
            const std::size_t half = std::size_t(bytes / 2);
            auto src = device_buffer(half), dst = device_buffer(half);
            return Body([=] {
              cudaMemcpy(dst.get(), src.get(), half, cudaMemcpyDeviceToDevice);
              sync();
            });
          }};
}

Peer cublas_peer(int64_t n) {
  return {"cublas", [n] {
            const std::size_t bytes = std::size_t(n * n) * sizeof(float);
            auto a = device_buffer(bytes), b = device_buffer(bytes), c = device_buffer(bytes);
            cudaMemset(a.get(), 0, bytes);
            cudaMemset(b.get(), 0, bytes);
            auto handle = std::shared_ptr<cublasContext>(
                [] {
                  cublasHandle_t h = nullptr;
                  if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS) throw std::runtime_error("cublas");
                  return h;
                }(),
                [](cublasHandle_t h) { cublasDestroy(h); });
            return Body([=] {
              const float one = 1, zero = 0;
              const int m = int(n);
              cublasSgemm(handle.get(), CUBLAS_OP_N, CUBLAS_OP_N, m, m, m, &one,
                          static_cast<const float*>(b.get()), m, static_cast<const float*>(a.get()),
                          m, &zero, static_cast<float*>(c.get()), m);
              sync();
            });
          }};
}

/// One training step of mlp_train_step_b128's model (workloads_nn.cpp: a
/// 784-256-256-10 ReLU MLP, softmax cross-entropy, SGD) with its parameters
/// and data on `gpu`, written as a user writes it.
constexpr int64_t kGpuIn = 784, kGpuHidden = 256, kGpuClasses = 10;

Body mlp_body(int64_t batch, st::Device gpu) {
  const st::nn::MLP model({kGpuIn, kGpuHidden, kGpuHidden, kGpuClasses}, st::nn::Activation::relu);
  auto params = std::make_shared<st::nn::Params>(model.init(1));
  for (auto& [name, p] : *params) p = p.to(gpu);
  auto opt = std::make_shared<st::nn::SGD>(0.01);
  const st::Tensor x = st::randn({batch, kGpuIn}, 2).to(gpu);
  // The loss is st::nn::cross_entropy's arithmetic, -mean(log_softmax(logits)
  // at i * classes + label i), with those positions made once on the device:
  // nn::cross_entropy reads the labels back to the host on every call to
  // check them and builds the positions there (nn/losses.cpp, label_positions).
  const st::Tensor labels = (st::rand({batch}, 3, st::f64) * double(kGpuClasses)).to(st::i64);
  std::vector<int64_t> flat = labels.to_vector<int64_t>();
  for (std::size_t i = 0; i < flat.size(); ++i) flat[i] += int64_t(i) * kGpuClasses;
  const st::Tensor positions = st::from_vector(flat, {batch}).to(gpu);
  return [=] {
    auto loss = [&](const auto& p) {
      const auto logp = st::reshape(st::log_softmax(model(p, x), 1), {-1});
      return -st::mean(logp.vix(positions));
    };
    const st::nn::Params grads = st::grad(loss, *params);
    opt->step(*params, grads);
    g_sink = params->at("0.bias").raw();
    sync();
  };
}

Workload mlp_step(int64_t batch, st::Device gpu) {
  Workload step{"cuda_mlp_train_step_b" + std::to_string(batch),
                [batch, gpu] { return mlp_body(batch, gpu); }};
  // Multiply-adds of the three forward GEMMs and the five backward ones (dW1..3, dH1, dH2).
  const double fwd =
      double(batch) * (kGpuIn * kGpuHidden + kGpuHidden * kGpuHidden + kGpuHidden * kGpuClasses);
  step.flops = 2 * (fwd + 2 * fwd - double(batch) * kGpuIn * kGpuHidden);
  return step;
}

const Register kGpu(50, [](std::vector<Workload>& w) {
  if (st::cuda_device_count() == 0) return;
  const st::Device gpu = st::Device::cuda(0);
  for (const int64_t n : {1024, 4096, 8192}) {
    Workload m{"cuda_matmul_f32_n" + std::to_string(n),
               [n, gpu] {
                 const st::RawTensor a = raw::normal({n, n}, 1, st::f32, gpu);
                 const st::RawTensor b = raw::normal({n, n}, 2, st::f32, gpu);
                 return Body([=] {
                   g_sink = raw::matmul(a, b);
                   sync();
                 });
               },
               2.0 * n * n * n};
    m.peers.push_back(cublas_peer(n));
    w.push_back(m);
  }
  const int64_t big = 8192;
  const double elems = double(big) * big * sizeof(float);
  Workload e{"cuda_exp_f32_8192x8192", [gpu] {
               const st::RawTensor x = raw::normal({big, big}, 3, st::f32, gpu);
               return Body([=] {
                 g_sink = raw::unary(st::UnaryOp::exp, x);
                 sync();
               });
             }};
  e.bytes = 2 * elems;
  e.peers.push_back(copy_peer(e.bytes));
  w.push_back(e);
  Workload a{"cuda_add_f32_8192x8192", [gpu] {
               const st::RawTensor x = raw::normal({big, big}, 4, st::f32, gpu);
               const st::RawTensor y = raw::normal({big, big}, 5, st::f32, gpu);
               return Body([=] {
                 g_sink = raw::binary(st::BinaryOp::add, x, y);
                 sync();
               });
             }};
  a.bytes = 3 * elems;
  a.peers.push_back(copy_peer(a.bytes));
  w.push_back(a);
  // Sums: of every element (one output: the reduced positions cut into slices),
  // and over axis 0 (8192 outputs, the columns kernel). Each reads the matrix once.
  for (const bool all : {true, false}) {
    Workload s{all ? "cuda_sum_f32_8192x8192" : "cuda_sum_axis0_f32_8192x8192", [all, gpu] {
                 const st::RawTensor x = raw::normal({big, big}, 6, st::f32, gpu);
                 const st::Shape axes = all ? st::Shape{0, 1} : st::Shape{0};
                 return Body([=] {
                   g_sink = raw::reduce(st::ReduceOp::sum, x, axes);
                   sync();
                 });
               }};
    s.bytes = elems;
    s.peers.push_back(copy_peer(s.bytes));
    w.push_back(s);
  }
  w.push_back({"cuda_hessian_f64_n256", [gpu] {
                 const st::Tensor W = scaled_matrix(256, 11, st::f64).to(gpu);
                 const st::Tensor x = st::randn({256}, 12, st::f64).to(gpu);
                 auto f = [W](const auto& x) {
                   const auto t = st::tanh(st::matmul(W, x));
                   return st::sum(t * t) + 0.5 * st::sum(x * x);
                 };
                 return Body([=] {
                   g_sink = st::hessian(f, x).raw();
                   sync();
                 });
               }});
  // g(x) = tanh(W2 tanh(W1 x)), as jacrev_f32_n* in workloads_ad.cpp: one batched vjp.
  w.push_back({"cuda_jacrev_f32_n1024", [gpu] {
                 const int64_t n = 1024;
                 const st::Tensor W1 = scaled_matrix(n, 21, st::f32).to(gpu);
                 const st::Tensor W2 = scaled_matrix(n, 22, st::f32).to(gpu);
                 const st::Tensor x = st::randn({n}, 23, st::f32).to(gpu);
                 auto g = [W1, W2](const auto& x) {
                   return st::tanh(st::matmul(W2, st::tanh(st::matmul(W1, x))));
                 };
                 return Body([=] {
                   g_sink = st::jacrev(g, x).raw();
                   sync();
                 });
               }});
  for (const int64_t batch : {128, 4096}) w.push_back(mlp_step(batch, gpu));
});

}  // namespace
}  // namespace bench
