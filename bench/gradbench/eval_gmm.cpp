// SPDX-License-Identifier: MIT
// GradBench's `gmm`: the log posterior of a Gaussian mixture with a Wishart prior on
// the precision matrices Q_k^T Q_k (evals/gmm/README.md), and its gradient with respect
// to alpha, mu, q and l. Q_k is exp(q_k) on the diagonal and l_k below it, packed
// column by column: the strict upper triangle of Q_k^T packed row by row.
#include <cmath>
#include <memory>
#include <numbers>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

/// log of the multivariate gamma function Gamma_p(a).
double log_multigamma(double a, int64_t p) {
  double out = 0.25 * double(p * (p - 1)) * std::log(std::numbers::pi);
  for (int64_t j = 1; j <= p; ++j) out += std::lgamma(a + 0.5 * double(1 - j));
  return out;
}

struct Gmm {
  int64_t d, k, n, m;
  double gamma;
  st::Tensor x;                // [n, d]
  st::Tensor alpha, mu, q, l;  // [k], [k, d], [k, d], [k, d (d - 1) / 2]
};

/// F = sum_i logsumexp_k(alpha_k + sum(q_k) - |Q_k (x_i - mu_k)|^2 / 2) - n logsumexp(alpha)
///     - n d log(2 pi) / 2 + the log Wishart prior.
template <class T>
T log_posterior(const Gmm& g, const T& alpha, const T& mu, const T& q, const T& l) {
  const T Q = st::diag_embed(st::exp(q)) + st::transpose(st::triu_unpack(l, g.d, 1), -2, -1);
  const T centered = g.x.unsqueeze(0) - mu.unsqueeze(1);                    // [k, n, d]
  const T Qx = st::matmul(centered, st::transpose(Q, -2, -1));              // [k, n, d]
  const T sum_q = st::sum(q, 1);                                            // [k]
  const T beta = (alpha + sum_q).unsqueeze(1) - 0.5 * st::sum(Qx * Qx, 2);  // [k, n]
  const double n = double(g.n), d = double(g.d);
  const T likelihood = st::sum(st::logsumexp(beta, 0)) - n * st::logsumexp(alpha) -
                       0.5 * n * d * std::log(2 * std::numbers::pi);
  // Wishart prior with V = I / gamma^2 and n_w = d + m + 1 degrees of freedom.
  const double nw = d + double(g.m) + 1;
  const double c =
      nw * d * (std::log(g.gamma) - 0.5 * std::log(2.0)) - log_multigamma(0.5 * nw, g.d);
  const T frobenius = st::sum(st::exp(2.0 * q)) + st::sum(l * l);
  const T prior =
      double(g.k) * c - 0.5 * g.gamma * g.gamma * frobenius + double(g.m) * st::sum(sum_q);
  return likelihood + prior;
}

std::shared_ptr<Gmm> parse(const Json& in) {
  auto g = std::make_shared<Gmm>();
  g->d = in.at("d");
  g->k = in.at("k");
  g->n = in.at("n");
  g->m = in.at("m");
  g->gamma = in.at("gamma");
  g->x = mat(in.at("x"));
  g->alpha = vec(in.at("alpha"));
  g->mu = mat(in.at("mu"));
  g->q = mat(in.at("q"));
  g->l = in.at("l").at(0).empty() ? st::zeros({g->k, 0}, st::f64) : mat(in.at("l"));
  return g;
}

}  // namespace

void register_gmm(Registry& r) {
  r["gmm"]["objective"] = [](const Json& input) {
    auto g = parse(input);
    auto out = std::make_shared<st::Tensor>();
    return Prepared{[=] { *out = log_posterior(*g, g->alpha, g->mu, g->q, g->l); },
                    [=] { return Json(number(*out)); }};
  };
  r["gmm"]["jacobian"] = [](const Json& input) {
    auto g = parse(input);
    auto out = std::make_shared<std::tuple<st::Tensor, st::Tensor, st::Tensor, st::Tensor>>();
    auto f = [g](const auto& alpha, const auto& mu, const auto& q, const auto& l) {
      return log_posterior(*g, alpha, mu, q, l);
    };
    return Prepared{[=] { *out = st::grad(f, g->alpha, g->mu, g->q, g->l); },
                    [=] {
                      const auto& [alpha, mu, q, l] = *out;
                      Json j = {{"alpha", to_json(alpha)}, {"mu", to_json(mu)}, {"q", to_json(q)}};
                      // [k, 0] for d = 1: k empty lists, as the eval sends them.
                      j["l"] = Json::array();
                      for (int64_t i = 0; i < g->k; ++i) j["l"].push_back(to_json(l.ix(i)));
                      return j;
                    }};
  };
}

}  // namespace gradbench
