// SPDX-License-Identifier: MIT
// GradBench's `ba` (ADBench's bundle adjustment): the reprojection error of every
// observation (a camera seeing a point) and the weight error 1 - w^2, and their sparse
// Jacobian. Each observation's error depends on its camera's 11 parameters, its point's 3
// and its weight: written once for one observation, batched with st::vmap, and the 2 x 15
// block of each observation's Jacobian is st::vmap of st::jacrev of the same function.
// The blocks are then laid out as the CSR matrix of ADBench's SparseMat (cpp/gradbench/
// evals/ba.hpp), as the manual tool does inside its timed function.
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

constexpr int64_t kCam = 11;  // [r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2]

/// The weighted reprojection error [2] of one observation from z = [camera (11), point (3),
/// weight (1)] and the feature it was observed at [2].
template <class Z, class F>
Z reprojection(const Z& z, const F& feature) {
  const Z rot = z.ix(st::slice(0, 3)), center = z.ix(st::slice(3, 6));
  const Z point = z.ix(st::slice(kCam, kCam + 3)) - center;
  // Rodrigues' rotation by the angle-axis vector rot; the first-order formula at angle 0.
  const Z sqtheta = st::sum(rot * rot);
  const Z theta = st::sqrt(sqtheta), c = st::cos(theta), s = st::sin(theta);
  const Z axis = rot / theta;
  const Z rotated =
      point * c + st::cross(axis, point) * s + axis * (st::sum(axis * point) * (1.0 - c));
  const Z cam = st::where(sqtheta != 0.0, rotated, point + st::cross(rot, point));
  // Projection, radial distortion, focal length and principal point.
  const Z proj = cam.ix(st::slice(0, 2)) / cam.ix(2);
  const Z rsq = st::sum(proj * proj);
  const Z distortion = 1.0 + z.ix(9) * rsq + z.ix(10) * rsq * rsq;
  const Z pixel = proj * distortion * z.ix(6) + z.ix(st::slice(7, 9));
  return z.ix(kCam + 3) * (pixel - feature);
}

struct Ba {
  int64_t n, m, p;
  st::Tensor cams, points, weights, features;  // [n, 11], [m, 3], [p], [p, 2]
  st::Tensor cam_of, point_of;                 // [p] each: observation i sees point_of[i]
  std::vector<int32_t> cam_list, point_list;   // the same, for laying out the Jacobian
};

/// Every observation's parameters side by side: [p, 15].
st::Tensor gathered(const Ba& b) {
  return st::concat(
      {b.cams.take(b.cam_of, 0), b.points.take(b.point_of, 0), b.weights.unsqueeze(1)}, 1);
}

std::shared_ptr<Ba> parse(const Json& in) {
  // The eval sends one camera, point, weight and feature, to be repeated (ADBench's data).
  auto b = std::make_shared<Ba>();
  b->n = in.at("n");
  b->m = in.at("m");
  b->p = in.at("p");
  b->cams = vec(in.at("cam")).unsqueeze(0).expand({b->n, kCam});
  b->points = vec(in.at("x")).unsqueeze(0).expand({b->m, 3});
  b->weights = st::full({b->p}, in.at("w").get<double>(), st::f64);
  b->features = vec(in.at("feat")).unsqueeze(0).expand({b->p, 2});
  // Observation i sees camera i mod n and point i mod m (ba.hpp's from_json).
  std::vector<int64_t> cam(std::size_t(b->p)), pt(std::size_t(b->p));
  for (int64_t i = 0; i < b->p; ++i) {
    cam[std::size_t(i)] = i % b->n;
    pt[std::size_t(i)] = i % b->m;
  }
  b->cam_of = st::from_vector(cam);
  b->point_of = st::from_vector(pt);
  b->cam_list.assign(cam.begin(), cam.end());
  b->point_list.assign(pt.begin(), pt.end());
  // The Jacobian's column indices are ints, as in ADBench's SparseMat.
  if (kCam * b->n + 3 * b->m + b->p > std::numeric_limits<int32_t>::max() ||
      31 * b->p > std::numeric_limits<int32_t>::max()) {
    throw std::runtime_error("ba: the Jacobian of this input has more than 2^31 columns or values");
  }
  return b;
}

/// ADBench's SparseMat: CSR rows, columns and values of the [3 p, 11 n + 3 m + p] Jacobian
/// (int indices, as there: half the pages of int64_t ones for the first call to fault in).
struct Sparse {
  std::vector<int32_t> rows, cols;
  std::vector<double> vals;
};

/// Lays out the Jacobian as ADBench's SparseMat into out, reusing its buffers' capacity across
/// calls. The values are the blocks [p, 2, 15] in row order (each row's 15 entries: the camera's
/// 11, the point's 3, the weight's 1, as the columns go) followed by the weights' derivatives.
void layout(const Ba& b, const st::Tensor& blocks, const st::Tensor& dw, Sparse& out) {
  const int32_t p = int32_t(b.p), nnz = 2 * 15 * p + p;
  out.rows.resize(std::size_t(3 * p + 1));
  out.cols.resize(std::size_t(nnz));
  for (int32_t r = 0; r <= 2 * p; ++r) out.rows[std::size_t(r)] = 15 * r;
  for (int32_t r = 1; r <= p; ++r) out.rows[std::size_t(2 * p + r)] = 30 * p + r;
  int32_t* col = out.cols.data();
  const int32_t points_at = int32_t(kCam * b.n), weights_at = int32_t(kCam * b.n + 3 * b.m);
  for (int32_t i = 0; i < p; ++i) {
    const int32_t cam = int32_t(kCam) * b.cam_list[std::size_t(i)];
    const int32_t point = points_at + 3 * b.point_list[std::size_t(i)];
    for (int32_t r = 0; r < 2; ++r) {
      for (int32_t k = 0; k < kCam; ++k) *col++ = cam + k;
      for (int32_t k = 0; k < 3; ++k) *col++ = point + k;
      *col++ = weights_at + i;
    }
  }
  for (int32_t i = 0; i < p; ++i) *col++ = weights_at + i;
  // Into the list's own buffer: a concat and a new vector were two more copies of it (and
  // fresh pages) per call.
  out.vals.resize(std::size_t(nnz));
  const std::span<double> vals(out.vals);
  blocks.copy_to(vals.first(std::size_t(30 * p)));
  dw.copy_to(vals.subspan(std::size_t(30 * p)));
}

/// The first 30 entries and the last of each list, as the eval compares them.
template <class V>
Json ends(const V& v) {
  Json out = Json::array();
  for (std::size_t i = 0; i < 30 && i < v.size(); ++i) out.push_back(v[i]);
  out.push_back(v.back());
  return out;
}

}  // namespace

void register_ba(Registry& r) {
  auto reproj = [](const auto& z, const auto& f) { return reprojection(z, f); };
  auto weight_error = [](const auto& w) { return 1.0 - w * w; };
  // Both functions under st::jit, traced while preparing (timed as "prepare", as a JAX tool's
  // compilation): the reprojection's forty elementwise ops, and their derivatives, run as a
  // few fused passes over the observations instead of one pass each.
  r["ba"]["objective"] = [=](const Json& input) {
    auto b = parse(input);
    auto out = std::make_shared<std::tuple<st::Tensor, st::Tensor>>();
    auto f = st::jit([=](const st::Tensor& features, const st::Tensor& w) {
      return std::make_tuple(st::vmap(reproj)(gathered(*b), features), weight_error(w));
    });
    auto run = [=] { *out = f(b->features, b->weights); };
    warm(f, b->features, b->weights);
    return Prepared{
        run, [=] {
          const auto& [reproj_error, w_err] = *out;
          return Json{
              {"reproj_error", {{"elements", to_json(reproj_error.ix(0))}, {"repeated", b->p}}},
              {"w_err", {{"element", number(w_err.ix(0))}, {"repeated", b->p}}}};
        }};
  };
  r["ba"]["jacobian"] = [=](const Json& input) {
    auto b = parse(input);
    auto out = std::make_shared<Sparse>();
    auto f = st::jit([=](const st::Tensor& features, const st::Tensor& w) {
      const st::Tensor blocks = st::vmap([&](const auto& z, const auto& f) {
        return st::jacrev(reproj, st::argnums<0>, z, f);
      })(gathered(*b), features);  // [p, 2, 15]
      return std::make_tuple(blocks, st::vmap(st::grad(weight_error))(w));
    });
    warm(f, b->features, b->weights);
    return Prepared{[=] {
                      const auto [blocks, dw] = f(b->features, b->weights);
                      layout(*b, blocks, dw, *out);
                    },
                    [=] {
                      return Json{{"rows", ends(out->rows)},
                                  {"cols", ends(out->cols)},
                                  {"vals", ends(out->vals)}};
                    }};
  };
}

}  // namespace gradbench
