// SPDX-License-Identifier: MIT
#include "nn/optim.hpp"

#include <cmath>

#include "core/error.hpp"
#include "raw/ops.hpp"

namespace strata::nn {

using strata::detail::fail;

namespace {

// dst op= src, where src is a same-shaped tensor or a 0-d coefficient
// (broadcast as a zero-stride view: no memory). No allocation.
void apply(BinaryOp op, const Tensor& dst, const Tensor& src) {
  const RawTensor& s = src.raw();
  raw::binary_(op, dst.raw(), s.ndim() == 0 && dst.ndim() != 0 ? s.expand(dst.shape()) : s);
}
void set(const Tensor& coefficient, double value) { raw::fill_(coefficient.raw(), value); }

void require_hyper(double v, bool ok, std::string_view what, std::string_view op) {
  if (!std::isfinite(v) || !ok) fail<ValueError>(op, "invalid ", what, " ", v);
}

}  // namespace

Optimizer::Optimizer(double lr, std::string_view name)
    : lr_(lr), name_(name), step_op_(name_ + ".step") {
  require_hyper(lr, lr >= 0, "learning rate", name_);
}

void Optimizer::set_lr(double lr) {
  require_hyper(lr, lr >= 0, "learning rate", name_);
  lr_ = lr;
}

void Optimizer::reset() {
  state_.clear();
  t_ = 0;
}

void Optimizer::check(const Params& params, const Params& grads) const {
  const std::string& op = step_op_;
  for (const auto& [name, p] : params) {
    auto it = grads.find(name);
    if (it == grads.end()) fail<ValueError>(op, "no gradient for parameter '", name, "'");
    const Tensor& g = it->second;
    if (!p.defined() || !g.defined()) {
      fail<ValueError>(op, "parameter or gradient '", name, "' is undefined");
    }
    if (!is_floating(p.dtype())) {
      fail<DTypeError>(op, "parameter '", name, "' has dtype ", dtype_name(p.dtype()),
                       ", needs a float dtype");
    }
    if (g.shape() != p.shape()) {
      fail<ShapeError>(op, "gradient '", name, "' has shape ", g.shape(), ", its parameter ",
                       p.shape());
    }
    if (g.dtype() != p.dtype()) {
      fail<DTypeError>(op, "gradient '", name, "' has dtype ", dtype_name(g.dtype()),
                       ", its parameter ", dtype_name(p.dtype()));
    }
    if (g.device() != p.device()) {
      fail<DeviceError>(op, "gradient '", name, "' is on another device than its parameter");
    }
    auto st = state_.find(name);
    if (st != state_.end()) {
      const Tensor& s = st->second.scratch;
      if (s.shape() != p.shape() || s.dtype() != p.dtype() || s.device() != p.device()) {
        fail<ShapeError>(op, "parameter '", name, "' changed from ", s.shape(), " ",
                         dtype_name(s.dtype()), " to ", p.shape(), " ", dtype_name(p.dtype()),
                         " since the last step (call reset())");
      }
    }
  }
  for (const auto& [name, g] : grads) {
    if (!params.count(name)) fail<ValueError>(op, "gradient '", name, "' has no parameter");
  }
}

void Optimizer::step(Params& params, const Params& grads) {
  check(params, grads);  // everything, before the first write
  ++t_;
  for (auto& [name, p] : params) {
    auto it = state_.find(name);
    if (it == state_.end()) {
      State st;
      st.scratch = Tensor(raw::empty(p.shape(), p.dtype(), p.device()));
      init_state(st, p);
      it = state_.emplace(name, std::move(st)).first;
    }
    ++it->second.t;
    update(p, grads.at(name), it->second);
  }
}

// --- SGD --------------------------------------------------------------------

SGD::SGD(double lr, double momentum, double weight_decay, bool nesterov)
    : Optimizer(lr, "SGD"), momentum_(momentum), weight_decay_(weight_decay), nesterov_(nesterov) {
  require_hyper(momentum, momentum >= 0, "momentum", name_);
  require_hyper(weight_decay, weight_decay >= 0, "weight_decay", name_);
  if (nesterov && momentum == 0) fail<ValueError>(name_, "nesterov needs a momentum > 0");
}

void SGD::init_state(State& st, const Tensor& p) const {
  if (momentum_ != 0) st.a = zeros(p.shape(), p.dtype(), p.device());  // the momentum buffer
}

void SGD::update(Tensor& p, const Tensor& g, State& st) const {
  // Each line one pass over the parameter's size: raw::axpby_ scales and adds in
  // place. The same values as scaling into a scratch buffer and subtracting it.
  const Tensor* d = &g;      // the gradient, with the weight decay added
  if (weight_decay_ != 0) {  // s = g + weight_decay p
    raw::copy_(st.scratch.raw(), g.raw());
    raw::axpby_(st.scratch.raw(), 1, p.raw(), weight_decay_);
    d = &st.scratch;
  }
  if (momentum_ == 0) return raw::axpby_(p.raw(), 1, d->raw(), -lr_);
  Tensor& buf = st.a;  // buf = momentum buf + d (d at the first step)
  if (st.t == 1) {
    raw::copy_(buf.raw(), d->raw());
  } else {
    raw::axpby_(buf.raw(), momentum_, d->raw(), 1);
  }
  if (nesterov_) {  // p -= lr d; p -= lr momentum buf
    raw::axpby_(p.raw(), 1, d->raw(), -lr_);
    raw::axpby_(p.raw(), 1, buf.raw(), -(lr_ * momentum_));
  } else {
    raw::axpby_(p.raw(), 1, buf.raw(), -lr_);
  }
}

// --- Adam / AdamW -----------------------------------------------------------

Adam::Adam(const AdamOptions& o, bool decoupled, std::string_view name)
    : Optimizer(o.lr, name), o_(o), decoupled_(decoupled) {
  require_hyper(o.beta1, o.beta1 >= 0 && o.beta1 < 1, "beta1", name_);
  require_hyper(o.beta2, o.beta2 >= 0 && o.beta2 < 1, "beta2", name_);
  require_hyper(o.eps, o.eps >= 0, "eps", name_);
  require_hyper(o.weight_decay, o.weight_decay >= 0, "weight_decay", name_);
}

void Adam::init_state(State& st, const Tensor& p) const {
  st.a = zeros(p.shape(), p.dtype(), p.device());               // the first moment
  st.b = zeros(p.shape(), p.dtype(), p.device());               // the second moment
  for (Tensor& c : st.c) c = zeros({}, p.dtype(), p.device());  // per-step coefficients
}

void Adam::update(Tensor& p, const Tensor& g, State& st) const {
  const double lr = lr_;
  const double bc1 = 1 - std::pow(o_.beta1, double(st.t));
  const double bc2 = 1 - std::pow(o_.beta2, double(st.t));
  Tensor &m = st.a, &v = st.b, &s = st.scratch;
  raw::copy_(s.raw(), g.raw());
  if (o_.weight_decay != 0 && !decoupled_) {  // s = g + weight_decay p (L2)
    raw::axpby_(s.raw(), 1, p.raw(), o_.weight_decay);
  }
  if (o_.weight_decay != 0 && decoupled_) {  // p -= lr weight_decay p (AdamW)
    set(st.c[0], 1 - lr * o_.weight_decay);
    apply(BinaryOp::mul, p, st.c[0]);
  }
  raw::axpby_(m.raw(), o_.beta1, s.raw(), 1 - o_.beta1);  // m = b1 m + (1 - b1) s
  apply(BinaryOp::mul, s, s);
  raw::axpby_(v.raw(), o_.beta2, s.raw(), 1 - o_.beta2);  // v = b2 v + (1 - b2) s^2
  // p -= (lr / bc1) m / (sqrt(v) / sqrt(bc2) + eps)
  raw::copy_(s.raw(), v.raw());
  set(st.c[1], 0.5);
  apply(BinaryOp::pow, s, st.c[1]);
  set(st.c[1], 1 / std::sqrt(bc2));
  apply(BinaryOp::mul, s, st.c[1]);
  set(st.c[1], o_.eps);
  apply(BinaryOp::add, s, st.c[1]);
  set(st.c[1], -1.0);
  apply(BinaryOp::pow, s, st.c[1]);
  apply(BinaryOp::mul, s, m);
  raw::axpby_(p.raw(), 1, s.raw(), -(lr / bc1));
}

}  // namespace strata::nn
