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
///
/// The per-op cost of recording is what a chain of tiny ops measures
/// (bench row ad_overhead_chain_3000ops), so the tape keeps its edges and saved
/// values in three flat arrays (a node is two offsets into them), and those
/// arrays are recycled, per thread, from one transform call to the next: a
/// steady loop of grad calls stops asking the system for them (and stops
/// faulting their pages in afresh) after its first call.
///
/// A leaf's cotangent is final once the walk has passed below the smallest node
/// with an edge into it (edges point to lower ids, so nothing later adds to it):
/// backward's optional LeafHook is called there, once per leaf, so a caller can
/// use each gradient while the rest of the pass runs (st::value_and_grad_with_hook,
/// ad/hooks.hpp; data-parallel training starts its all-reduces from it).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "diff/debug_nans.hpp"
#include "diff/ops.hpp"

namespace strata {

namespace detail {
/// Throws the "modified in place" error for a saved value whose version moved.
[[noreturn]] void saved_value_modified(uint64_t saved, uint64_t now);

/// A per-thread pool of emptied vectors whose capacity the next user takes over. Vectors
/// larger than kMaxBytes are not kept, so a huge tape does not pin its memory forever.
template <class V>
class Recycled {
 public:
  /// An empty vector, with the capacity of one given back earlier on this thread if any.
  static V take() {
    if (dead()) return V{};
    auto& free = pool().free;
    if (free.empty()) return V{};
    V v = std::move(free.back());
    free.pop_back();
    return v;
  }
  /// Empties `v` and keeps its capacity for a later take() on this thread.
  static void give(V& v) {
    v.clear();
    if (dead() || v.capacity() * sizeof(typename V::value_type) > kMaxBytes) return;
    auto& free = pool().free;
    if (free.size() < kMaxKept) free.push_back(std::move(v));
  }

 private:
  static constexpr std::size_t kMaxBytes = std::size_t{16} << 20;
  static constexpr std::size_t kMaxKept = 4;
  struct Pool {
    std::vector<V> free;
    ~Pool() { dead() = true; }
  };
  static Pool& pool() {
    thread_local Pool p;
    return p;
  }
  // Set once this thread's pool is destroyed (a tape destroyed later at thread exit frees
  // its vectors instead); a trivially destructible thread_local outlives the others.
  static bool& dead() {
    thread_local bool d = false;
    return d;
  }
};
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
  /// Called by backward once per leaf, as soon as the leaf's cotangent is final: the leaf's
  /// node id and its cotangent (nullptr when none reaches the leaf: its gradient is zero).
  /// The pointee is valid during the call only.
  using LeafHook = std::function<void(int64_t leaf, const T* cotangent)>;

  /// An empty tape.
  Tape() = default;
  Tape(const Tape&) = delete;
  Tape& operator=(const Tape&) = delete;
  /// Gives the tape's arrays back to this thread's pools for the next tape.
  ~Tape() {
    detail::Recycled<std::vector<Node>>::give(nodes_);
    detail::Recycled<std::vector<Edge>>::give(edges_);
    detail::Recycled<std::vector<Saved>>::give(saved_);
  }

  /// A node with no inputs: an argument of the transform.
  int64_t add_leaf() {
    last_leaf_ = add_node();
    nodes_.back().joint = kLeaf;
    return last_leaf_;
  }
  /// Starts a node computed from inputs; its inputs follow by add_edge, the plain values its
  /// pullbacks captured (values of level T, and plain masks or indices) by save, before the
  /// next node is started.
  int64_t add_node() {
    nodes_.push_back({int64_t(edges_.size()), int64_t(saved_.size()), -1});
    return int64_t(nodes_.size()) - 1;
  }
  /// An input of the last node started: its node id and the pullback to it.
  void add_edge(int64_t input, Pullback pullback) {
    edges_.push_back({input, std::move(pullback)});
  }
  /// A plain value under what the last node's pullbacks captured; its version is checked
  /// before they run.
  void save(const Tensor& v) {
    const auto& s = v.raw().storage();
    saved_.push_back({s, s->version()});
  }

  /// A node whose pullback gives every input's contribution in one call; `inputs` are the
  /// inputs' node ids, -1 for a constant input (its contribution is computed and dropped).
  int64_t add_joint(std::vector<int64_t> inputs, JointPullback pullback,
                    const std::vector<Tensor>& saved) {
    const int64_t id = add_node();
    for (const Tensor& v : saved) save(v);
    nodes_.back().joint = int64_t(joints_.size());
    joints_.push_back({std::move(inputs), std::move(pullback)});
    return id;
  }

  /// Cotangents of the leaves (the nodes with no inputs: the transform's arguments) up to
  /// `out`, given `seed` for `out`, indexed by node id; nullopt where none reached a leaf.
  /// Inner nodes' cotangents are dropped as soon as their pullbacks have run, and the vector
  /// ends after the last leaf.
  /// With `on_leaf_final`, calls it once for every leaf of the tape (also those `out` does
  /// not reach) as soon as that leaf's cotangent is final: before the walk goes below the
  /// smallest node with an edge into the leaf.
  /// Throws ValueError when a saved value was modified in place since it was recorded.
  std::vector<std::optional<T>> backward(int64_t out, const T& seed,
                                         const LeafHook* on_leaf_final = nullptr) const;

 private:
  /// Every leaf with the smallest node id up to `out` that has an edge into it
  /// (INT64_MAX: none), largest first: the order in which their cotangents become final.
  std::vector<std::pair<int64_t, int64_t>> leaves_by_last_use(int64_t out) const;

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
  static constexpr int64_t kLeaf = -2;  ///< Node::joint of a leaf
  /// A node: where its edges and saved values start in edges_ and saved_ (they end where
  /// the next node's start), and its joint pullback in joints_ (-1: none; kLeaf: a leaf).
  struct Node {
    int64_t first_edge;
    int64_t first_saved;
    int64_t joint;
  };
  /// A joint node's inputs (-1: constant) and pullback.
  struct Joint {
    std::vector<int64_t> inputs;
    JointPullback pullback;
  };
  std::vector<Node> nodes_ = detail::Recycled<std::vector<Node>>::take();
  std::vector<Edge> edges_ = detail::Recycled<std::vector<Edge>>::take();
  std::vector<Saved> saved_ = detail::Recycled<std::vector<Saved>>::take();
  std::vector<Joint> joints_;
  int64_t last_leaf_ = -1;  ///< the largest leaf id
};

// Out of the class, so not inline: for the levels of ad/stacks.hpp the library's one copy
// is called instead of one compiled in every file that takes a gradient.
template <Diffable T>
std::vector<std::optional<T>> Tape<T>::backward(int64_t out, const T& seed,
                                                const LeafHook* on_leaf_final) const {
  const detail::BackwardPassScope backward_pass;  // st::debug_nans names this pass
  // Few cotangents are alive at once: node i's lives in live[slot[i]], and a slot freed
  // when its node is done serves the next one, so the pass touches O(frontier) values.
  std::vector<int32_t> slot(std::size_t(out) + 1, -1);
  std::vector<std::optional<T>> live;
  std::vector<int32_t> free_slots;
  auto accumulate = [&](int64_t input, T g) {
    int32_t& s = slot[std::size_t(input)];
    if (s >= 0) {
      live[std::size_t(s)] = Prims<T>::binary(BinaryOp::add, *live[std::size_t(s)], g);
      return;
    }
    if (free_slots.empty()) {
      s = int32_t(live.size());
      live.emplace_back(std::move(g));
    } else {
      s = free_slots.back();
      free_slots.pop_back();
      live[std::size_t(s)].emplace(std::move(g));
    }
  };
  accumulate(out, seed);
  const int64_t n_nodes = int64_t(nodes_.size());
  // The leaves in the order their cotangents become final (see LeafHook).
  std::vector<std::pair<int64_t, int64_t>> finals;  // (smallest consumer, leaf)
  if (on_leaf_final) finals = leaves_by_last_use(out);
  std::size_t next_final = 0;
  auto fire_finals_above = [&](int64_t i) {
    for (; next_final < finals.size() && finals[next_final].first > i; ++next_final) {
      const int64_t leaf = finals[next_final].second;
      const int32_t s = leaf <= out ? slot[std::size_t(leaf)] : -1;
      (*on_leaf_final)(leaf, s >= 0 ? &*live[std::size_t(s)] : nullptr);
    }
  };
  for (int64_t i = out; i >= 0; --i) {
    if (on_leaf_final) fire_finals_above(i);
    const int32_t s = slot[std::size_t(i)];
    const Node& n = nodes_[std::size_t(i)];
    if (s < 0 || n.joint == kLeaf) continue;
    const int64_t saved_end =
        i + 1 < n_nodes ? nodes_[std::size_t(i) + 1].first_saved : int64_t(saved_.size());
    for (int64_t k = n.first_saved; k < saved_end; ++k) {
      const Saved& v = saved_[std::size_t(k)];
      if (v.storage->version() != v.version) {
        detail::saved_value_modified(v.version, v.storage->version());
      }
    }
    // Moved out of its slot first: accumulating into an input may grow `live`.
    const T ct = std::move(*live[std::size_t(s)]);
    live[std::size_t(s)].reset();
    free_slots.push_back(s);
    if (n.joint >= 0) {
      const Joint& j = joints_[std::size_t(n.joint)];
      std::vector<T> gs = j.pullback(ct);
      for (std::size_t k = 0; k < gs.size(); ++k) {
        if (j.inputs[k] >= 0) accumulate(j.inputs[k], std::move(gs[k]));
      }
    }
    const int64_t edges_end =
        i + 1 < n_nodes ? nodes_[std::size_t(i) + 1].first_edge : int64_t(edges_.size());
    for (int64_t k = n.first_edge; k < edges_end; ++k) {
      const Edge& e = edges_[std::size_t(k)];
      accumulate(e.input, e.pullback(ct));
    }
  }
  if (on_leaf_final) fire_finals_above(-1);
  // The leaves' cotangents (a leaf has no inputs: its cotangent stays in its slot); every
  // leaf's id is at most last_leaf_.
  const int64_t leaves_end = std::min(out, last_leaf_) + 1;
  std::vector<std::optional<T>> ct(std::size_t(std::max<int64_t>(leaves_end, 0)));
  for (int64_t i = 0; i < leaves_end; ++i) {
    const int32_t s = slot[std::size_t(i)];
    if (s >= 0) ct[std::size_t(i)] = std::move(live[std::size_t(s)]);
  }
  return ct;
}

template <Diffable T>
std::vector<std::pair<int64_t, int64_t>> Tape<T>::leaves_by_last_use(int64_t out) const {
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  std::vector<int64_t> first_use(std::size_t(last_leaf_ + 1), kNone);
  auto use = [&](int64_t input, int64_t node) {
    if (input >= 0 && input <= last_leaf_) {
      int64_t& u = first_use[std::size_t(input)];
      u = std::min(u, node);
    }
  };
  const int64_t end = std::min(out + 1, int64_t(nodes_.size()));
  for (int64_t i = 0; i < end; ++i) {
    const Node& n = nodes_[std::size_t(i)];
    if (n.joint >= 0) {
      for (int64_t input : joints_[std::size_t(n.joint)].inputs) use(input, i);
    }
    const int64_t edges_end = i + 1 < int64_t(nodes_.size()) ? nodes_[std::size_t(i) + 1].first_edge
                                                             : int64_t(edges_.size());
    for (int64_t k = n.first_edge; k < edges_end; ++k) use(edges_[std::size_t(k)].input, i);
  }
  std::vector<std::pair<int64_t, int64_t>> finals;
  for (int64_t leaf = 0; leaf <= last_leaf_; ++leaf) {
    if (nodes_[std::size_t(leaf)].joint == kLeaf)
      finals.emplace_back(first_use[std::size_t(leaf)], leaf);
  }
  std::stable_sort(finals.begin(), finals.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  return finals;
}

}  // namespace strata
