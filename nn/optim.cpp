// SPDX-License-Identifier: MIT
#include "nn/optim.hpp"

#include <cmath>

#include "core/error.hpp"
#include "raw/ops.hpp"
#include "raw/trace.hpp"

namespace strata::nn {

using strata::detail::fail;

namespace {

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
      const State& s = st->second;
      if (s.shape != p.shape() || s.dtype != p.dtype() || s.device != p.device()) {
        fail<ShapeError>(op, "parameter '", name, "' changed from ", s.shape, " ",
                         dtype_name(s.dtype), " to ", p.shape(), " ", dtype_name(p.dtype()),
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
  // The whole step is one effect: a jit plan that records it runs it again on every call,
  // with the step counters and learning rate the optimiser has then.
  std::vector<std::string> names;
  std::vector<RawTensor> operands;
  for (const auto& [name, p] : params) {
    names.push_back(name);
    operands.push_back(p.raw());
    operands.push_back(grads.at(name).raw());
  }
  raw::trace::effect(step_op_, std::move(operands), [this, names](auto in) {
    ++t_;
    for (std::size_t k = 0; k < names.size(); ++k) {
      Tensor p(in[2 * k]);
      auto it = state_.find(names[k]);
      if (it == state_.end()) {
        State st;
        st.shape = p.shape();
        st.dtype = p.dtype();
        st.device = p.device();
        init_state(st, p);
        it = state_.emplace(names[k], std::move(st)).first;
      }
      ++it->second.t;
      update(p, Tensor(in[2 * k + 1]), it->second);
    }
  });
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
  if (weight_decay_ != 0) st.scratch = Tensor(raw::empty(p.shape(), p.dtype(), p.device()));
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
  require_hyper(double(o.decay_min_ndim), o.decay_min_ndim >= 0, "decay_min_ndim", name_);
}

void Adam::init_state(State& st, const Tensor& p) const {
  st.a = zeros(p.shape(), p.dtype(), p.device());  // the first moment
  st.b = zeros(p.shape(), p.dtype(), p.device());  // the second moment
}

void Adam::update(Tensor& p, const Tensor& g, State& st) const {
  // One pass over p, its moments and g (scalar::AdamStep has the arithmetic):
  // 12 in-place ops a step before, each a pass and a dispatch of its own.
  const double t = double(st.t);
  const double wd = p.ndim() >= o_.decay_min_ndim ? o_.weight_decay : 0.0;
  raw::adam_step_(p.raw(), st.a.raw(), st.b.raw(), g.raw(),
                  {.beta1 = o_.beta1,
                   .beta2 = o_.beta2,
                   .step = lr_ / (1 - std::pow(o_.beta1, t)),
                   .sqrt_bc2 = std::sqrt(1 - std::pow(o_.beta2, t)),
                   .eps = o_.eps,
                   .l2 = decoupled_ ? 0 : wd,
                   .decay = decoupled_ ? 1 - lr_ * wd : 1});
}

}  // namespace strata::nn
