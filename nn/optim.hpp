// SPDX-License-Identifier: MIT
#pragma once
/// Optimisers: each `step(params, grads)` updates the named parameters in
/// place (every view of them sees the new values) from gradients of the same
/// names, shapes and dtypes (what st::grad returns for the map). State
/// tensors (momentum, moments, one scratch buffer per parameter) are
/// allocated on a parameter's first step; later steps run on the raw layer's
/// in-place ops only, with the per-step coefficients written into 0-d
/// tensors allocated once, so a warmed-up step allocates nothing.
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
  double lr() const { return lr_; }
  /// Changes the learning rate (for schedules); must be finite and >= 0.
  void set_lr(double lr);

 protected:
  /// Per-parameter state: up to two buffers shaped like the parameter (made
  /// by init_state), a scratch buffer (which also records the parameter's
  /// shape, dtype and device), and 0-d coefficient tensors of its dtype.
  struct State {
    Tensor a, b, scratch;
    Tensor c[4];
    int64_t t = 0;  ///< this parameter's step count (1 at its first update)
  };
  Optimizer(double lr, std::string_view name);
  /// Allocates st.a and st.b as the optimiser needs, for parameter p.
  virtual void init_state(State& st, const Tensor& p) const = 0;
  /// The update of one parameter at its step st.t (1-based), in place.
  virtual void update(Tensor& p, const Tensor& g, State& st) const = 0;

  double lr_;
  int64_t t_ = 0;
  std::string name_;
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
  explicit SGD(double lr, double momentum = 0.0, double weight_decay = 0.0, bool nesterov = false);

 private:
  void init_state(State& st, const Tensor& p) const override;
  void update(Tensor& p, const Tensor& g, State& st) const override;
  double momentum_, weight_decay_;
  bool nesterov_;
};

/// The hyperparameters of Adam and AdamW.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
};

/// Adam (Kingma & Ba, 2015, Algorithm 1), with torch.optim.Adam's L2 weight
/// decay (g += weight_decay p before the moments):
///   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2;
///   p -= lr (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps).
class Adam : public Optimizer {
 public:
  explicit Adam(double lr = 1e-3) : Adam(AdamOptions{.lr = lr}) {}
  explicit Adam(const AdamOptions& o) : Adam(o, false, "Adam") {}

 protected:
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
  explicit AdamW(double lr = 1e-3, double weight_decay = 1e-2)
      : AdamW(AdamOptions{.lr = lr, .weight_decay = weight_decay}) {}
  explicit AdamW(const AdamOptions& o) : Adam(o, true, "AdamW") {}
};

}  // namespace strata::nn
