// SPDX-License-Identifier: MIT
#pragma once
/// Tape<T>: the record of one reverse-mode transform call.
///
/// Node i holds, for each differentiable input, the input's node id and a
/// pullback mapping node i's cotangent to that input's contribution (or one
/// joint pullback giving every input's contribution at once: a custom rule's
/// bwd, ad/custom.hpp), plus the storages (and their versions) of the values
/// its pullbacks saved. The backward pass walks the nodes once in reverse
/// order, accumulating cotangents and dropping each node's cotangent once its
/// pullbacks have run; it does not consume the tape, so a pullback may run
/// many times.
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "diff/debug_nans.hpp"
#include "diff/ops.hpp"

namespace strata {

namespace detail {
/// Throws the "modified in place" error for a saved value whose version moved.
[[noreturn]] void saved_value_modified(uint64_t saved, uint64_t now);
}  // namespace detail

/// The record of one reverse-mode transform call over the level T (st::grad and friends make
/// one per call): nodes with their inputs and pullbacks, and the versions of the values the
/// pullbacks saved, so an in-place write to one of them is reported, not silently used.
template <Diffable T>
class Tape {
 public:
  /// Maps a node's cotangent to one input's contribution.
  using Pullback = std::function<T(const T&)>;
  /// Maps a node's cotangent to the contributions of all its inputs at once, in input order.
  using JointPullback = std::function<std::vector<T>(const T&)>;
  /// One differentiable input of a node.
  struct Edge {
    int64_t input;      ///< the input's node id
    Pullback pullback;  ///< the node's cotangent -> the input's contribution
  };
  /// A storage a pullback captured, with its version at record time.
  struct Saved {
    std::shared_ptr<Storage> storage;  ///< the captured value's storage
    uint64_t version;                  ///< its version when recorded
  };

  /// A node with no inputs: an argument of the transform.
  int64_t add_leaf() {
    nodes_.emplace_back();
    return int64_t(nodes_.size()) - 1;
  }
  /// A node computed from inputs; `saved` are the plain values under what its
  /// pullbacks captured (values of level T, and plain masks or indices).
  int64_t add(std::vector<Edge> edges, const std::vector<Tensor>& saved) {
    Node n{std::move(edges), {}, {}, {}};
    for (const Tensor& v : saved) {
      const auto& s = v.raw().storage();
      n.saved.push_back({s, s->version()});
    }
    nodes_.push_back(std::move(n));
    return int64_t(nodes_.size()) - 1;
  }

  /// A node whose pullback gives every input's contribution in one call; `inputs` are the
  /// inputs' node ids, -1 for a constant input (its contribution is computed and dropped).
  int64_t add_joint(std::vector<int64_t> inputs, JointPullback pullback,
                    const std::vector<Tensor>& saved) {
    const int64_t id = add({}, saved);
    nodes_.back().joint_inputs = std::move(inputs);
    nodes_.back().joint = std::move(pullback);
    return id;
  }

  /// Cotangents of the leaves (the nodes with no inputs: the transform's arguments) up to
  /// `out`, given `seed` for `out`; nullopt where none reached a node, and for every inner
  /// node, whose cotangent is dropped as soon as its pullbacks have run.
  /// Throws ValueError when a saved value was modified in place since it was recorded.
  std::vector<std::optional<T>> backward(int64_t out, const T& seed) const {
    const detail::BackwardPassScope backward_pass;  // st::debug_nans names this pass
    std::vector<std::optional<T>> ct(std::size_t(out) + 1);
    ct[std::size_t(out)] = seed;
    for (int64_t i = out; i >= 0; --i) {
      if (!ct[std::size_t(i)]) continue;
      const Node& n = nodes_[std::size_t(i)];
      for (const Saved& s : n.saved) {
        if (s.storage->version() != s.version) {
          detail::saved_value_modified(s.version, s.storage->version());
        }
      }
      auto accumulate = [&](int64_t input, T g) {
        auto& slot = ct[std::size_t(input)];
        slot = slot ? Prims<T>::binary(BinaryOp::add, *slot, g) : std::move(g);
      };
      if (n.joint) {
        std::vector<T> gs = n.joint(*ct[std::size_t(i)]);
        for (std::size_t k = 0; k < gs.size(); ++k) {
          if (n.joint_inputs[k] >= 0) accumulate(n.joint_inputs[k], std::move(gs[k]));
        }
      }
      for (const Edge& e : n.edges) accumulate(e.input, e.pullback(*ct[std::size_t(i)]));
      if (n.joint || !n.edges.empty()) ct[std::size_t(i)].reset();
    }
    return ct;
  }

 private:
  struct Node {
    std::vector<Edge> edges;
    std::vector<Saved> saved;
    std::vector<int64_t> joint_inputs;  ///< a joint node's inputs (-1: constant)
    JointPullback joint;                ///< a joint node's pullback (else empty)
  };
  std::vector<Node> nodes_;
};

}  // namespace strata
