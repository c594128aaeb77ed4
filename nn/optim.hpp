// SPDX-License-Identifier: MIT
#pragma once
/// Optimisers: each `step(params, grads)` updates the named parameters in
/// place (every view of them sees the new values) from gradients of the same
/// names, shapes and dtypes (what st::grad returns for the map). State
/// tensors (momentum, moments, SGD's scratch buffer for weight decay) are
/// allocated on a parameter's first step; later steps run on the raw layer's
/// in-place ops only, with the per-step coefficients passed as arguments
/// (raw::axpby_ for SGD; raw::adam_step_, one pass per parameter, for Adam
/// and AdamW), so a warmed-up step allocates nothing.
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "nn/params.hpp"

namespace strata::nn {

/// What every optimiser shares: the per-parameter state and the checks.
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// One update of params from grads (same names, shapes and dtypes; float
  /// dtypes). Throws ValueError for a missing or extra name, ShapeError or
  /// DTypeError for a mismatch, and leaves params untouched when it throws.
  void step(Params& params, const Params& grads);
  /// Forgets the state (moments, step count), as for a fresh optimiser.
  void reset();
  /// The number of steps taken since construction or reset().
  int64_t steps() const { return t_; }
  /// The learning rate.
  double lr() const { return lr_; }
  /// Changes the learning rate (for schedules); must be finite and >= 0.
  void set_lr(double lr);

 protected:
  /// Per-parameter state: up to three buffers shaped like the parameter (made
  /// by init_state as the optimiser needs them), and the parameter's shape,
  /// dtype and device at its first step.
  struct State {
    Tensor a;        ///< first state buffer (momentum, first moment)
    Tensor b;        ///< second state buffer (second moment)
    Tensor scratch;  ///< per-step workspace shaped like the parameter
    Shape shape;     ///< the parameter's shape at its first step
    DType dtype{};   ///< the parameter's dtype at its first step
    Device device;   ///< the parameter's device at its first step
    int64_t t = 0;   ///< this parameter's step count (1 at its first update)
  };
  /// Checks lr (finite, >= 0; ValueError) and records the name used in error messages.
  Optimizer(double lr, std::string_view name);
  /// Allocates st.a, st.b and st.scratch as the optimiser needs, for parameter p.
  virtual void init_state(State& st, const Tensor& p) const = 0;
  /// The update of one parameter at its step st.t (1-based), in place.
  virtual void update(Tensor& p, const Tensor& g, State& st) const = 0;

  double lr_;            ///< the learning rate
  int64_t t_ = 0;        ///< steps taken
  std::string name_;     ///< "SGD", "Adam", ...
  std::string step_op_;  ///< "<name>.step", for error messages

 private:
  void check(const Params& params, const Params& grads) const;
  std::map<std::string, State> state_;
};

/// Stochastic gradient descent (torch.optim.SGD without dampening):
///   g += weight_decay p;  buf = momentum buf + g (buf = g at the first step);
///   p -= lr (nesterov ? g + momentum buf : buf)   (buf = g when momentum is 0).
class SGD : public Optimizer {
 public:
  /// SGD with the given learning rate, momentum, L2 weight decay and Nesterov flag (all
  /// finite, >= 0; ValueError otherwise). Example: `st::nn::SGD opt(0.1, 0.9);`
  explicit SGD(double lr, double momentum = 0.0, double weight_decay = 0.0, bool nesterov = false);

 private:
  void init_state(State& st, const Tensor& p) const override;
  void update(Tensor& p, const Tensor& g, State& st) const override;
  double momentum_, weight_decay_;
  bool nesterov_;
};

/// The hyperparameters of Adam and AdamW.
struct AdamOptions {
  double lr = 1e-3;           ///< learning rate
  double beta1 = 0.9;         ///< decay of the first moment, in [0, 1)
  double beta2 = 0.999;       ///< decay of the second moment, in [0, 1)
  double eps = 1e-8;          ///< added to the denominator
  double weight_decay = 0.0;  ///< L2 (Adam) or decoupled (AdamW) decay
  /// weight_decay applies to the parameters of at least this many dims only: 2 decays weight
  /// matrices and embeddings but not biases or norm scales (nanoGPT's two parameter groups).
  int64_t decay_min_ndim = 0;
};

/// Adam (Kingma & Ba, 2015, Algorithm 1), with torch.optim.Adam's L2 weight
/// decay (g += weight_decay p before the moments):
///   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
///   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
class Adam : public Optimizer {
 public:
  /// Adam with default betas: `st::nn::Adam opt(1e-2);`
  explicit Adam(double lr = 1e-3) : Adam(AdamOptions{.lr = lr}) {}
  /// Adam with every hyperparameter: `st::nn::Adam opt({.lr = 1e-2, .beta2 = 0.99});`
  /// ValueError for a negative or non-finite value or a beta outside [0, 1).
  explicit Adam(const AdamOptions& o) : Adam(o, false, "Adam") {}

 protected:
  /// Adam (decoupled = false) or AdamW (decoupled = true), named `name` in errors.
  Adam(const AdamOptions& o, bool decoupled, std::string_view name);

 private:
  void init_state(State& st, const Tensor& p) const override;
  void update(Tensor& p, const Tensor& g, State& st) const override;
  AdamOptions o_;
  bool decoupled_;
};

/// AdamW (Loshchilov & Hutter, 2019): Adam with decoupled weight decay,
/// p -= lr weight_decay p before the Adam update (torch.optim.AdamW's form,
/// the paper's with the schedule multiplier equal to lr). Default decay 0.01.
class AdamW : public Adam {
 public:
  /// AdamW with default betas: `st::nn::AdamW opt(1e-3, 0.01);`
  explicit AdamW(double lr = 1e-3, double weight_decay = 1e-2)
      : AdamW(AdamOptions{.lr = lr, .weight_decay = weight_decay}) {}
  /// AdamW with every hyperparameter (o.weight_decay is the decoupled decay).
  explicit AdamW(const AdamOptions& o) : Adam(o, true, "AdamW") {}
};

}  // namespace strata::nn
