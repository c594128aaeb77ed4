// SPDX-License-Identifier: MIT
// GradBench's nested-AD evals from Siskind and Pearlmutter: `saddle` (the min over x of the
// max over y of (x1^2 + y1^2) - (x2^2 + y2^2), by gradient descent in both) and `particle`
// (the control w that sends a charged particle through the origin: an Euler integration
// whose force is the gradient of a potential, inside gradient descent on w). Each has four
// functions, the outer and inner derivative by forward (f) or reverse (r) mode: rr, rf, fr,
// ff. The outer derivative differentiates through the inner optimisation or integration,
// its loops and its branches, which read values with st::item; the inner transform runs on
// values of the outer one (one level up), which is what keeps the two derivatives apart.
#include <memory>
#include <string>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

/// GradBench's gradient descent (cpp/gradbench/gd.hpp, multivariate_argmin), on values of any
/// level: f(x) the objective (0-d), g(x) its gradient (x's shape).
template <class T, class F, class G>
T argmin(const F& f, const G& g, T x) {
  T fx = f(x), gx = g(x);
  int i = 0;
  double eta = 1e-5;
  while (true) {
    if (st::item<double>(st::norm(gx)) <= 1e-5) return x;
    if (i == 10) {
      eta *= 2;
      i = 0;
      continue;
    }
    const T next = x - eta * gx;
    if (st::item<double>(st::norm(x - next)) <= 1e-5) return x;
    const T f_next = f(next);
    if (st::item<double>(f_next) < st::item<double>(fx)) {
      x = next;
      fx = f_next;
      gx = g(x);
      ++i;
    } else {
      eta /= 2;
      i = 0;
    }
  }
}

/// The gradient of the 0-d function f at x by reverse mode (st::grad) or forward mode
/// (st::jacfwd, one tangent per element of x).
template <class F, class T>
T gradient(bool forward, const F& f, const T& x) {
  if (forward) return st::jacfwd(f, x);
  return st::grad(f, x);
}

/// The four functions of an eval, each run(forward outer, forward inner).
template <class Run>
void register_modes(Registry& r, const std::string& eval, Run run) {
  for (const std::string mode : {"rr", "rf", "fr", "ff"}) {
    r[eval][mode] = [=](const Json& input) { return run(input, mode[0] == 'f', mode[1] == 'f'); };
  }
}

}  // namespace

void register_saddle(Registry& r) {
  register_modes(r, "saddle", [](const Json& input, bool outer_fwd, bool inner_fwd) {
    auto start = std::make_shared<st::Tensor>(vec(input.at("start")));
    auto out = std::make_shared<st::Tensor>();
    auto run = [=] {
      auto f = [](const auto& p1, const auto& p2) {
        return st::sum(p1 * p1) - st::sum(p2 * p2);  // (x1^2 + y1^2) - (x2^2 + y2^2)
      };
      // max over p2 of f(p1, p2), by descent on -f; p1 of any level, p2 starting one level up.
      auto argmax = [&](const auto& p1, bool fwd) {
        using T = std::decay_t<decltype(p1)>;
        auto cost = [&](const auto& p2) { return -f(p1, p2); };
        return argmin(
            cost, [&](const auto& p2) { return gradient(fwd, cost, p2); }, st::lift<T>(*start));
      };
      auto outer_cost = [&](const auto& p1) { return f(p1, argmax(p1, inner_fwd)); };
      const st::Tensor p1 = argmin(
          outer_cost, [&](const st::Tensor& p) { return gradient(outer_fwd, outer_cost, p); },
          *start);
      *out = st::concat({p1, argmax(p1, outer_fwd)});
    };
    return Prepared{run, [out] { return to_json(*out); }};
  });
}

void register_particle(Registry& r) {
  register_modes(r, "particle", [](const Json& input, bool outer_fwd, bool inner_fwd) {
    auto w0 = std::make_shared<st::Tensor>(st::full({1}, input.at("w").get<double>(), st::f64));
    auto out = std::make_shared<st::Tensor>();
    auto run = [=] {
      // x_0(t_f)^2 for the control w: Euler steps under the force -grad p(x) of the potential
      // p(x) = sum_c 1 / |x - c| of charges at (10, 10 - w) and (10, 0), until x crosses y = 0,
      // then linear interpolation to the crossing.
      auto miss = [&](const auto& w) {
        using T = std::decay_t<decltype(w)>;
        const T charges =
            st::stack({st::concat({st::lift<T>(st::full({1}, 10.0, st::f64)), 10.0 - w}),
                       st::lift<T>(st::from_vector(std::vector<double>{10, 0}))});
        auto potential = [&](const auto& x) { return st::sum(1.0 / st::norm(x - charges, 1)); };
        T x = st::lift<T>(st::from_vector(std::vector<double>{0, 8}));
        T v = st::lift<T>(st::from_vector(std::vector<double>{0.75, 0}));
        const double dt = 0.1;
        while (true) {
          const T accel = -gradient(inner_fwd, potential, x);
          x = x + dt * v;
          if (st::item<double>(x.ix(1)) <= 0) {
            const T at_axis = x + (-x.ix(1) / v.ix(1)) * v;
            return at_axis.ix(0) * at_axis.ix(0);
          }
          v = v + dt * accel;
        }
      };
      *out = argmin(
          miss, [&](const st::Tensor& w) { return gradient(outer_fwd, miss, w); }, *w0);
    };
    return Prepared{run, [out] { return Json(number(*out)); }};
  });
}

}  // namespace gradbench
