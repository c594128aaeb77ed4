// SPDX-License-Identifier: MIT
// GradBench's `ht` (ADBench's hand tracking): a skinned hand model posed by 26 angles,
// and the offsets of observed points from it (cpp/gradbench/evals/ht.hpp), with the
// Jacobian by forward mode (st::jacfwd: 26 pose columns, and in the "complicated" variant
// 2 more for each point's barycentric coordinates u, seeded for all points at once since
// each point's error depends on its own u only). Written over whole batches: the 22 bones'
// rotations at once, their chain one depth level at a time, and the skinning of the
// vertices the points use as one matrix product.
#include <memory>
#include <numbers>
#include <vector>

#include "bench/gradbench/tool.hpp"

namespace gradbench {
namespace {

struct Hand {
  int64_t bones = 0, points = 0;
  bool mirrored = false, complicated = false;
  st::Tensor base_relatives, inverse_base_absolutes;   // [bones, 4, 4]
  st::Tensor pose_index;                               // [3, bones + 3]: theta position + 1
  std::vector<st::Tensor> level_bones, level_parents;  // bones by depth; their parents' rows
  st::Tensor bone_order;      // where each bone's absolute lands in the levels' concat
  st::Tensor base_positions;  // [q, 4]: the vertices the points use, homogeneous
  st::Tensor weights;         // [q, bones]
  st::Tensor observed;        // [points, 3]
  st::Tensor theta, us;       // [26], [points, 2]
};

/// [..., 3, 3] matrices from their 9 entries, row by row, each [...].
template <class T>
T matrix3(const std::vector<T>& e) {
  st::Shape s = e[0].shape();
  s.push_back(3);
  s.push_back(3);
  return st::stack(e, -1).reshape(s);
}

/// Rotations Rz(a1) Ry(a2) Rx(a0) of the angles a [..., 3] (ADBench's "xzy" order).
template <class T>
T euler_rotations(const T& a) {
  const T cx = st::cos(a.ix(st::ellipsis, 0)), sx = st::sin(a.ix(st::ellipsis, 0));
  const T cz = st::cos(a.ix(st::ellipsis, 1)), sz = st::sin(a.ix(st::ellipsis, 1));
  const T cy = st::cos(a.ix(st::ellipsis, 2)), sy = st::sin(a.ix(st::ellipsis, 2));
  const T o = st::zeros_like(cx), i = o + 1.0;
  const T rx = matrix3<T>({i, o, o, o, cx, -sx, o, sx, cx});
  const T ry = matrix3<T>({cy, o, sy, o, i, o, -sy, o, cy});
  const T rz = matrix3<T>({cz, -sz, o, sz, cz, o, o, o, i});
  return st::matmul(st::matmul(rz, ry), rx);
}

/// The rotation by the angle-axis vector v [3] (the identity below an angle of 1e-4).
template <class T>
T angle_axis_rotation(const T& v) {
  const T angle = st::norm(v);
  if (st::item<double>(angle) < 1e-4) return st::lift<T>(st::eye(3, st::f64));
  const T n = v / angle, c = st::cos(angle), s = st::sin(angle);
  const T x = n.ix(0), y = n.ix(1), z = n.ix(2), o = st::zeros_like(x);
  const T cross = matrix3<T>({o, -z, y, z, o, -x, -y, x, o});
  return c * st::eye(3, st::f64) + (1.0 - c) * st::matmul(n.unsqueeze(1), n.unsqueeze(0)) +
         s * cross;
}

/// The positions [q, 3] of the hand's vertices the points use, posed by theta.
template <class T>
T posed_vertices(const Hand& h, const T& theta) {
  const int64_t nb = h.bones;
  // pose [3, bones + 3]: global rotation, scale (ones), translation, then each bone's angles.
  const T pose =
      st::take(st::pad(theta, {{1, 0}}), h.pose_index.flatten(), 0).reshape({3, nb + 3}) +
      st::pad(st::ones({3, 1}, st::f64), {{0, 0}, {1, nb + 1}});
  const T rot = euler_rotations(pose.ix(st::all, st::slice(3, st::none)).transpose(0, 1));
  const st::Pads to4{{0, 0}, {0, 1}, {0, 1}};
  const T posed =
      st::pad(rot, to4) + st::pad(st::ones({nb, 1, 1}, st::f64), {{0, 0}, {3, 0}, {3, 0}});
  const T relatives = st::matmul(h.base_relatives, posed);  // [bones, 4, 4]
  // Each bone's absolute transform is its parent's times its own, one depth at a time.
  std::vector<T> levels{relatives.take(h.level_bones[0], 0)};
  for (std::size_t d = 1; d < h.level_bones.size(); ++d) {
    levels.push_back(
        st::matmul(levels[d - 1].take(h.level_parents[d], 0), relatives.take(h.level_bones[d], 0)));
  }
  const T absolutes = st::concat(levels).take(h.bone_order, 0);
  const T transforms = st::matmul(absolutes, h.inverse_base_absolutes).ix(st::all, st::slice(0, 3));
  // Linear blend skinning: each vertex's blended [3, 4] transform times its position.
  const T blended = st::matmul(h.weights, transforms.reshape({nb, 12})).reshape({-1, 3, 4});
  T vertices = st::sum(blended * h.base_positions.unsqueeze(1), 2);  // [q, 3]
  if (h.mirrored) vertices = vertices * st::from_vector(std::vector<double>{-1, 1, 1});
  const T global = angle_axis_rotation(pose.ix(st::all, 0)) * pose.ix(st::all, 1).unsqueeze(0);
  return st::matmul(vertices, global.transpose(0, 1)) + pose.ix(st::all, 2);
}

/// The offsets [points, 3] of the observed points from the hand: from its vertices, or in
/// the complicated variant from points u0 v0 + u1 v1 + (1 - u0 - u1) v2 of its triangles.
template <class T, class U>
T errors(const Hand& h, const T& theta, const U& us) {
  const T v = posed_vertices(h, theta);
  if (!h.complicated) return h.observed - v;
  const T corners = v.reshape({h.points, 3, 3});  // [point, corner, xyz]
  const U u0 = us.ix(st::all, st::slice(0, 1)), u1 = us.ix(st::all, st::slice(1, 2));
  const T on_hand = u0 * corners.ix(st::all, 0) + u1 * corners.ix(st::all, 1) +
                    (1.0 - u0 - u1) * corners.ix(st::all, 2);
  return h.observed - on_hand;
}

std::shared_ptr<Hand> parse(const Json& in) {
  auto h = std::make_shared<Hand>();
  const Json& model = in.at("data").at("model");
  const auto parents = model.at("parents").get<std::vector<int64_t>>();
  h->bones = int64_t(parents.size());
  h->mirrored = model.at("is_mirrored").get<bool>();
  auto mats = [&](const Json& j) {
    std::vector<st::Tensor> m;
    for (const Json& x : j) m.push_back(mat(x));
    return st::stack(m);
  };
  h->base_relatives = mats(model.at("base_relatives"));
  h->inverse_base_absolutes = mats(model.at("inverse_base_absolutes"));
  // theta -> pose (ht.hpp's to_pose_params): 1 + the theta position, 0 for a zero.
  std::vector<int64_t> index(std::size_t(3 * (h->bones + 3)), 0);
  auto at = [&](int64_t row, int64_t col) -> int64_t& {
    return index[std::size_t(row * (h->bones + 3) + col)];
  };
  for (int64_t r = 0; r < 3; ++r) {
    at(r, 0) = 1 + r;
    at(r, 2) = 4 + r;
  }
  int64_t next = 6, col = 5;
  for (int64_t finger = 0; finger < 5; ++finger, ++col) {
    for (int64_t joint = 2; joint <= 4; ++joint, ++col) {
      at(0, col) = 1 + next++;
      if (joint == 2) at(1, col) = 1 + next++;
    }
  }
  h->pose_index = st::from_vector(index, {3, h->bones + 3});
  // Bones grouped by depth (parents come first in ADBench's order).
  std::vector<int64_t> depth(parents.size()), row_in_level(parents.size());
  std::vector<std::vector<int64_t>> bones, parent_rows;
  for (std::size_t b = 0; b < parents.size(); ++b) {
    const int64_t parent = parents[b];
    depth[b] = parent < 0 ? 0 : depth[std::size_t(parent)] + 1;
    const std::size_t d = std::size_t(depth[b]);
    if (d >= bones.size()) {
      bones.resize(d + 1);
      parent_rows.resize(d + 1);
    }
    row_in_level[b] = int64_t(bones[d].size());
    bones[d].push_back(int64_t(b));
    parent_rows[d].push_back(parent < 0 ? 0 : row_in_level[std::size_t(parent)]);
  }
  std::vector<int64_t> order(parents.size());
  int64_t offset = 0;
  for (std::size_t d = 0; d < bones.size(); ++d) {
    h->level_bones.push_back(st::from_vector(bones[d]));
    h->level_parents.push_back(st::from_vector(parent_rows[d]));
    for (std::size_t i = 0; i < bones[d].size(); ++i)
      order[std::size_t(bones[d][i])] = offset + int64_t(i);
    offset += int64_t(bones[d].size());
  }
  h->bone_order = st::from_vector(order);
  // The vertices the points use: their own, or their triangles' corners.
  const auto corr = in.at("data").at("correspondences").get<std::vector<int64_t>>();
  h->points = int64_t(corr.size());
  h->complicated = !in.at("us").empty();
  std::vector<int64_t> vertices;
  const auto triangles = model.at("triangles").get<std::vector<std::vector<int64_t>>>();
  for (int64_t c : corr) {
    if (!h->complicated)
      vertices.push_back(c);
    else
      for (int64_t v : triangles[std::size_t(c)]) vertices.push_back(v);
  }
  const st::Tensor vids = st::from_vector(vertices);
  h->base_positions = mat(model.at("base_positions")).take(vids, 0);
  h->weights = mat(model.at("weights")).take(vids, 0);
  h->observed = mat(in.at("data").at("points"));
  h->theta = vec(in.at("theta"));
  h->us = h->complicated ? mat(in.at("us")) : st::zeros({h->points, 2}, st::f64);
  return h;
}

}  // namespace

void register_ht(Registry& r) {
  r["ht"]["objective"] = [](const Json& input) {
    auto h = parse(input);
    auto out = std::make_shared<st::Tensor>();
    return Prepared{[=] { *out = errors(*h, h->theta, h->us); },
                    [=] { return to_json(out->flatten()); }};
  };
  r["ht"]["jacobian"] = [](const Json& input) {
    auto h = parse(input);
    auto out = std::make_shared<st::Tensor>();
    return Prepared{[=] {
                      const int64_t rows = 3 * h->points;
                      if (!h->complicated) {
                        auto f = [&](const auto& theta) { return errors(*h, theta, h->us); };
                        *out = st::jacfwd(f, h->theta).reshape({rows, -1});
                        return;
                      }
                      // du: one shift c [2] of every point's u at once.
                      auto f = [&](const auto& theta, const auto& c) {
                        return errors(*h, theta, h->us + c);
                      };
                      auto [jt, ju] = st::jacfwd(f, h->theta, st::zeros({2}, st::f64));
                      *out = st::concat({ju.reshape({rows, 2}), jt.reshape({rows, -1})}, 1);
                    },
                    [=] { return to_json(*out); }};
  };
}

}  // namespace gradbench
