// SPDX-License-Identifier: MIT
#pragma once
/// st::jit: trace a function once per signature, then replay its plan (jit/plan.hpp).
///
/// The first call with a new signature runs f as usual while a trace records every raw call
/// it makes (raw/trace.hpp): the transforms inside f (grad, vmap, hessian, an optimiser's
/// step) all end in raw calls, so the trace holds the whole computation, backward passes
/// included. Later calls with the same signature run the plan: the recorded kernels on the
/// new inputs, with none of the levels, tapes, broadcasting and composites above them.
///
/// The purity rule (as JAX's jit): f's host-side work (printing, counters, branches on
/// non-tensor values) runs once, at tracing; the plan replays only tensor operations. A branch
/// on a traced tensor's value (item(), to_vector()) is an error at tracing, since the plan
/// could not replay it. Tensors f captures (parameters in its closure) are read at every call
/// through their storage: in-place updates (an optimiser's step, add_) are seen; assigning the
/// captured variable a new tensor is an error at the next call. A captured tensor f reads on
/// the host (`scale.item()`) fixes that value into the plan: once the program writes or drops
/// that tensor, the next call traces again (and f writing it after reading it is an error).
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "diff/tensor.hpp"

namespace strata {

/// Counters over every st::jit callable of the program since the start (or reset_jit_stats).
struct JitStats {
  uint64_t calls = 0;              ///< calls of jitted functions
  uint64_t hits = 0;               ///< calls that ran a cached plan
  uint64_t traces = 0;             ///< calls that traced (a new signature)
  uint64_t eager = 0;              ///< calls that ran f directly (STRATA_JIT=0, inside a trace, or
                                   ///< arguments of a level above Tensor)
  std::size_t steps_recorded = 0;  ///< steps of the last trace
  std::size_t steps_run = 0;       ///< of those, steps its plan runs per call
  std::size_t steps_folded = 0;    ///< of those, steps computed once, at tracing
  std::size_t steps_merged = 0;    ///< of those, repeats of an earlier step, dropped (CSE)
  std::size_t constants_shared = 0;  ///< folded constants read as an equal earlier one
};

/// The counters of every jitted function: `st::jit_stats().hits`.
JitStats jit_stats();
/// Sets every counter of jit_stats() to zero.
void reset_jit_stats();
/// False when the environment sets STRATA_JIT=0: every jitted function then runs f directly.
bool jit_enabled();

namespace tracing {
class Plan;  // jit/plan.hpp: the plans are built and run in jit/jit.cpp
}

namespace detail {

/// The signature of one input tensor: what a plan was traced for.
struct JitLeaf {
  Shape shape;               ///< its shape
  Strides strides;           ///< its strides
  int64_t offset = 0;        ///< its offset in its storage
  DType dtype = DType::f32;  ///< its dtype
  Device device;             ///< its device
  int32_t alias = -1;        ///< the first earlier leaf with the same storage (-1: none)
  /// Equal signatures.
  bool operator==(const JitLeaf&) const = default;
};

/// A tensor's place in a key (the tensor itself is described by its JitLeaf).
struct JitSlot {
  /// Every slot is equal.
  bool operator==(const JitSlot&) const = default;
};

/// A floating-point argument in a key. == would share one plan between 0.0 and -0.0 (whose
/// results differ: 1 / -0.0) and never find a plan traced for a NaN: keys are equal when the
/// values are the same value, sign of zero included, or both NaN.
template <std::floating_point X>
struct JitFloat {
  X value;  ///< the argument
  /// The same value: equal and of the same sign, or both NaN.
  bool operator==(const JitFloat& o) const {
    if (std::isnan(value) || std::isnan(o.value)) return std::isnan(value) && std::isnan(o.value);
    return value == o.value && std::signbit(value) == std::signbit(o.value);
  }
};

/// Counts a call for jit_stats(): kind 0 eager, 1 hit, 2 trace (with the plan's counts).
void count_jit_call(int kind, const tracing::Plan* plan = nullptr);
/// Whether a trace is recording on this thread (a jitted function called inside one runs f).
bool jit_tracing();
/// Records run() (which calls f on the input leaves and appends its result leaves to outs)
/// and compiles the trace into a plan.
std::shared_ptr<const tracing::Plan> jit_trace(
    std::span<const RawTensor> leaves, const std::function<void(std::vector<RawTensor>&)>& run);
/// The plan's result leaves for input leaves.
std::vector<RawTensor> jit_run(const tracing::Plan& plan, std::span<const RawTensor> leaves);
/// The plan's listing (tracing::Plan::explain).
std::string jit_explain(const tracing::Plan& plan);
/// Whether the values the function read on the host while plan was traced still hold
/// (tracing::Plan::current).
bool jit_current(const tracing::Plan& plan);

template <class X>
struct is_std_vector : std::false_type {};
template <class E, class A>
struct is_std_vector<std::vector<E, A>> : std::true_type {};
template <class X>
struct is_std_array : std::false_type {};
template <class E, std::size_t N>
struct is_std_array<std::array<E, N>> : std::true_type {};
template <class X>
struct is_string_map : std::false_type {};
template <class E>
struct is_string_map<std::map<std::string, E>> : std::true_type {};
template <class X>
struct is_tuple_like : std::false_type {};
template <class... E>
struct is_tuple_like<std::tuple<E...>> : std::true_type {};
template <class A, class B>
struct is_tuple_like<std::pair<A, B>> : std::true_type {};

/// Whether every tensor in X (a tree or a plain value) is a plain st::Tensor: jit plans
/// functions of Tensors; values of a level above (grad(jit(f))) run f directly.
template <class X>
constexpr bool jit_plain() {
  if constexpr (std::is_same_v<X, Tensor>) {
    return true;
  } else if constexpr (Diffable<X>) {
    return false;
  } else if constexpr (is_std_vector<X>::value || is_std_array<X>::value) {
    return jit_plain<typename X::value_type>();
  } else if constexpr (is_string_map<X>::value) {
    return jit_plain<typename X::mapped_type>();
  } else if constexpr (is_tuple_like<X>::value) {
    return []<std::size_t... I>(std::index_sequence<I...>) {
      return (jit_plain<std::tuple_element_t<I, X>>() && ...);
    }
    (std::make_index_sequence<std::tuple_size_v<X>>{});
  } else {
    return true;
  }
}

/// The cache key of an argument: its tree with every tensor a JitSlot (the tensor appended to
/// `leaves`) and every other value copied (it is compared with == on later calls; a float or a
/// double as a JitFloat).
template <class X>
auto jit_key(const X& x, std::vector<RawTensor>& leaves) {
  if constexpr (std::is_same_v<X, Tensor>) {
    leaves.push_back(x.raw());
    return JitSlot{};
  } else if constexpr (is_std_vector<X>::value) {
    std::vector<decltype(jit_key(std::declval<const typename X::value_type&>(), leaves))> out;
    for (const auto& e : x) out.push_back(jit_key(e, leaves));
    return out;
  } else if constexpr (is_std_array<X>::value) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::array{jit_key(x[I], leaves)...};
    }
    (std::make_index_sequence<std::tuple_size_v<X>>{});
  } else if constexpr (is_string_map<X>::value) {
    std::map<std::string, decltype(jit_key(x.begin()->second, leaves))> out;
    for (const auto& [k, v] : x) out.emplace(k, jit_key(v, leaves));
    return out;
  } else if constexpr (is_tuple_like<X>::value) {
    return std::apply([&](const auto&... e) { return std::make_tuple(jit_key(e, leaves)...); }, x);
  } else if constexpr (std::is_floating_point_v<X>) {
    return JitFloat<X>{x};
  } else {
    static_assert(std::equality_comparable<X> && std::copy_constructible<X>,
                  "st::jit: a non-tensor argument is part of the cache key, so it must be "
                  "copyable and comparable with ==; capture other objects (a model, an "
                  "optimiser) in the function instead");
    return x;
  }
}

/// Appends the tensors of a result tree to `leaves`, in jit_assign's order.
template <class X>
void jit_collect(const X& x, std::vector<RawTensor>& leaves) {
  if constexpr (std::is_same_v<X, Tensor>) {
    leaves.push_back(x.raw());
  } else if constexpr (is_std_vector<X>::value || is_std_array<X>::value) {
    for (const auto& e : x) jit_collect(e, leaves);
  } else if constexpr (is_string_map<X>::value) {
    for (const auto& [k, v] : x) jit_collect(v, leaves);
  } else if constexpr (is_tuple_like<X>::value) {
    std::apply([&](const auto&... e) { (jit_collect(e, leaves), ...); }, x);
  }
}

/// Replaces the tensors of a result tree with outs[k], outs[k + 1], ... (jit_collect's order);
/// with an empty outs, clears them (a plan's result template holds no storage).
template <class X>
void jit_assign(X& x, std::span<const RawTensor> outs, std::size_t& k) {
  if constexpr (std::is_same_v<X, Tensor>) {
    x = outs.empty() ? Tensor() : Tensor(outs[k++]);
  } else if constexpr (is_std_vector<X>::value || is_std_array<X>::value) {
    for (auto& e : x) jit_assign(e, outs, k);
  } else if constexpr (is_string_map<X>::value) {
    for (auto& [key, v] : x) jit_assign(v, outs, k);
  } else if constexpr (is_tuple_like<X>::value) {
    std::apply([&](auto&... e) { (jit_assign(e, outs, k), ...); }, x);
  }
}

/// The signatures of input leaves, aliases included.
std::vector<JitLeaf> jit_signature(std::span<const RawTensor> leaves);

}  // namespace detail

/// A jitted function (st::jit makes it): callable with f's arguments, it returns f's result.
/// Copies share one cache of plans.
template <class F>
class Jit {
 public:
  /// Jits f, keeping up to `cache_size` plans (one per signature, least recently used dropped).
  explicit Jit(F f, std::size_t cache_size = 8)
      : f_(std::move(f)), cache_(std::make_shared<Cache>()) {
    set_cache_size(cache_size);
  }

  /// f(xs...): the plan for the arguments' signature (tracing it on the first call), or f itself
  /// when jit_enabled() is false, a trace is recording already, or an argument holds values of
  /// a level above Tensor (`st::grad(st::jit(f))`: f is differentiated as written).
  template <class... X>
  auto operator()(const X&... xs) const {
    using R = std::invoke_result_t<const F&, const X&...>;
    if constexpr (!(detail::jit_plain<X>() && ...) || !detail::jit_plain<R>()) {
      detail::count_jit_call(0);
      return f_(xs...);
    } else {
      if (!jit_enabled() || detail::jit_tracing()) {
        detail::count_jit_call(0);
        return f_(xs...);
      }
      std::vector<RawTensor> leaves;
      auto [entry, traced] = lookup<R>(leaves, xs...);
      if (traced) return std::move(*traced);
      const std::vector<RawTensor> outs = detail::jit_run(*entry->plan, leaves);
      R r = entry->result;
      std::size_t k = 0;
      detail::jit_assign(r, std::span<const RawTensor>(outs), k);
      return r;
    }
  }

  /// The plan for these arguments (traced now if it is not cached), listed step by step: what
  /// each call runs, what was folded into constants or dropped, and the bytes it moves.
  template <class... X>
  std::string explain(const X&... xs) const {
    using R = std::invoke_result_t<const F&, const X&...>;
    static_assert((detail::jit_plain<X>() && ...) && detail::jit_plain<R>(),
                  "st::jit: explain takes the plain tensors a plan is traced for");
    std::vector<RawTensor> leaves;
    return detail::jit_explain(*lookup<R>(leaves, xs...).first->plan);
  }

  /// Keeps at most n >= 1 plans (ValueError for 0).
  void set_cache_size(std::size_t n) {
    if (n == 0) detail::fail<ValueError>("jit", "the cache size must be at least 1");
    std::lock_guard lock(cache_->mutex);
    cache_->capacity = n;
    if (cache_->entries.size() > n) cache_->entries.resize(n);
  }
  /// The number of plans cached now.
  std::size_t cached() const {
    std::lock_guard lock(cache_->mutex);
    return cache_->entries.size();
  }

 private:
  /// A cached plan.
  struct Entry {
    virtual ~Entry() = default;
    std::shared_ptr<const tracing::Plan> plan;  ///< the plan
    std::vector<detail::JitLeaf> leaves;        ///< the input tensors it was traced for
  };
  /// A cached plan for arguments of key type K and a result of type R.
  template <class K, class R>
  struct Typed : Entry {
    Typed(K k, R r) : key(std::move(k)), result(std::move(r)) {}
    K key;     ///< the arguments' trees and non-tensor values
    R result;  ///< f's result with its tensors cleared (filled from the plan's outputs)
  };
  /// The plans of one jitted function, most recently used first.
  struct Cache {
    std::mutex mutex;                             ///< guards entries
    std::vector<std::shared_ptr<Entry>> entries;  ///< most recently used first
    std::size_t capacity = 8;                     ///< at most this many entries
  };

  /// The entry for the arguments (their tensors appended to leaves), and f's result when this
  /// call traced it.
  template <class R, class... X>
  std::pair<std::shared_ptr<
                Typed<decltype(std::make_tuple(detail::jit_key(
                          std::declval<const X&>(), std::declval<std::vector<RawTensor>&>())...)),
                      R>>,
            std::optional<R>>
  lookup(std::vector<RawTensor>& leaves, const X&... xs) const {
    auto key = std::make_tuple(detail::jit_key(xs, leaves)...);
    using E = Typed<decltype(key), R>;
    std::vector<detail::JitLeaf> sig = detail::jit_signature(leaves);
    {
      std::lock_guard lock(cache_->mutex);
      auto& es = cache_->entries;
      for (std::size_t i = 0; i < es.size(); ++i) {
        auto e = std::dynamic_pointer_cast<E>(es[i]);
        if (!e || e->leaves != sig || !(e->key == key)) continue;
        if (!detail::jit_current(*e->plan)) {  // a value it read on the host changed: trace again
          es.erase(es.begin() + std::ptrdiff_t(i));
          break;
        }
        std::rotate(es.begin(), es.begin() + std::ptrdiff_t(i), es.begin() + std::ptrdiff_t(i) + 1);
        detail::count_jit_call(1);
        return {e, std::nullopt};
      }
    }
    std::optional<R> r;
    std::shared_ptr<const tracing::Plan> plan =
        detail::jit_trace(leaves, [&](std::vector<RawTensor>& outs) {
          r.emplace(f_(xs...));
          detail::jit_collect(*r, outs);
        });
    R result = *r;
    std::size_t k = 0;
    detail::jit_assign(result, std::span<const RawTensor>(), k);
    auto e = std::make_shared<E>(std::move(key), std::move(result));
    e->plan = std::move(plan);
    e->leaves = std::move(sig);
    detail::count_jit_call(2, e->plan.get());
    std::lock_guard lock(cache_->mutex);
    auto& es = cache_->entries;
    es.insert(es.begin(), e);
    if (es.size() > cache_->capacity) es.pop_back();
    return {e, std::move(r)};
  }

  F f_;
  std::shared_ptr<Cache> cache_;
};

/// f traced once per signature (the shapes, strides, dtypes and devices of its tensor
/// arguments, their trees, and its non-tensor arguments' values: 0.0 and -0.0 are two, every
/// NaN one) and replayed as a plan.
/// Wraps anything: `st::jit(st::value_and_grad(loss))`, a whole training step.
/// Example: `auto step = st::jit([&](const st::Tensor& x) { return st::grad(f)(x); });`
template <class F>
Jit<F> jit(F f) {
  return Jit<F>(std::move(f));
}

}  // namespace strata
