// SPDX-License-Identifier: MIT
// The set operations of the sparsity tracer's index sets (ad/sparse/sets.hpp).
#include "ad/sparse/sets.hpp"

#include <algorithm>
#include <numeric>

namespace strata::detail {
namespace {
using Table = ElementSets::Table;
}  // namespace

int64_t SetBuilder::add(std::vector<int64_t>& scratch) {
  std::sort(scratch.begin(), scratch.end());
  scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
  const int64_t id = add_sorted(scratch);
  scratch.clear();
  return id;
}

int64_t SetBuilder::add_sorted(std::span<const int64_t> keys) {
  if (keys.empty()) return -1;
  table_->keys.insert(table_->keys.end(), keys.begin(), keys.end());
  table_->offsets.push_back(int64_t(table_->keys.size()));
  return int64_t(table_->offsets.size()) - 2;
}

Sets SetBuilder::finish(std::vector<int64_t> ids) {
  if (table_->keys.empty()) return nullptr;
  return std::make_shared<const ElementSets>(std::move(table_), std::move(ids));
}

Sets singletons(int64_t n) {
  auto table = std::make_shared<Table>();
  table->keys.resize(std::size_t(n));
  std::iota(table->keys.begin(), table->keys.end(), int64_t{0});
  table->offsets.resize(std::size_t(n) + 1);
  std::iota(table->offsets.begin(), table->offsets.end(), int64_t{0});
  if (n == 0) return nullptr;
  std::vector<int64_t> ids = table->keys;
  return std::make_shared<const ElementSets>(std::move(table), std::move(ids));
}

Sets gather(const Sets& s, std::span<const int64_t> from) {
  if (!s) return nullptr;
  std::vector<int64_t> ids(from.size());
  bool any = false;
  for (std::size_t i = 0; i < from.size(); ++i) {
    ids[i] = from[i] < 0 ? -1 : s->id(from[i]);
    any = any || ids[i] >= 0;
  }
  if (!any) return nullptr;
  return std::make_shared<const ElementSets>(s->table(), std::move(ids));
}

Sets unite(const std::vector<Sets>& operands) {
  std::vector<const ElementSets*> ops;
  for (const Sets& s : operands) {
    if (s && std::find(ops.begin(), ops.end(), s.get()) == ops.end()) ops.push_back(s.get());
  }
  if (ops.empty()) return nullptr;
  if (ops.size() == 1) {
    for (const Sets& s : operands) {
      if (s.get() == ops[0]) return s;
    }
  }
  const int64_t n = ops[0]->size();
  SetBuilder out;
  std::vector<int64_t> ids(static_cast<std::size_t>(n)), scratch, merged;
  std::vector<int64_t> previous(ops.size(), -2), current(ops.size());
  int64_t last = -1;
  for (int64_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < ops.size(); ++k) current[k] = ops[k]->id(i);
    // A run of elements with the same operand sets (a broadcast) shares one output set.
    if (current == previous) {
      ids[std::size_t(i)] = last;
      continue;
    }
    previous = current;
    scratch.clear();
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::span<const int64_t> s = ops[k]->set(current[k]);
      merged.clear();
      std::set_union(scratch.begin(), scratch.end(), s.begin(), s.end(),
                     std::back_inserter(merged));
      std::swap(scratch, merged);
    }
    last = out.add_sorted(scratch);
    ids[std::size_t(i)] = last;
  }
  return out.finish(std::move(ids));
}

Sets reduce(const Sets& s, std::span<const int64_t> dest, int64_t n_out) {
  if (!s || n_out == 0) return nullptr;
  // The elements of each output, bucketed (a counting sort by destination).
  std::vector<int64_t> start(static_cast<std::size_t>(n_out) + 1, 0);
  for (std::size_t i = 0; i < dest.size(); ++i) {
    if (dest[i] >= 0 && s->id(int64_t(i)) >= 0) ++start[std::size_t(dest[i]) + 1];
  }
  std::partial_sum(start.begin(), start.end(), start.begin());
  std::vector<int64_t> members(static_cast<std::size_t>(start.back())),
      fill(start.begin(), start.end() - 1);
  for (std::size_t i = 0; i < dest.size(); ++i) {
    const int64_t id = s->id(int64_t(i));
    if (dest[i] >= 0 && id >= 0) members[std::size_t(fill[std::size_t(dest[i])]++)] = id;
  }
  SetBuilder out;
  std::vector<int64_t> ids(static_cast<std::size_t>(n_out), -1), scratch;
  for (int64_t g = 0; g < n_out; ++g) {
    auto b = members.begin() + start[std::size_t(g)],
         e = members.begin() + start[std::size_t(g) + 1];
    // Each distinct set once: a matrix whose elements share one set reduces in one copy.
    std::sort(b, e);
    e = std::unique(b, e);
    if (b == e) continue;
    if (e - b == 1) {
      ids[std::size_t(g)] = out.add_sorted(s->set(*b));
      continue;
    }
    for (auto it = b; it != e; ++it) {
      const std::span<const int64_t> set = s->set(*it);
      scratch.insert(scratch.end(), set.begin(), set.end());
    }
    ids[std::size_t(g)] = out.add(scratch);
  }
  return out.finish(std::move(ids));
}

Sets pairs_of(const Sets& a, const Sets& b) {
  if (!a || !b) return nullptr;
  const int64_t n = a->size();
  SetBuilder out;
  std::vector<int64_t> ids(static_cast<std::size_t>(n)), scratch;
  int64_t previous_a = -2, previous_b = -2, last = -1;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t ia = a->id(i), ib = b->id(i);
    if (ia == previous_a && ib == previous_b) {
      ids[std::size_t(i)] = last;
      continue;
    }
    previous_a = ia, previous_b = ib;
    const std::span<const int64_t> sa = a->set(ia), sb = b->set(ib);
    for (int64_t p : sa) {
      for (int64_t q : sb) scratch.push_back(pair_key(p, q));
    }
    last = out.add(scratch);
    ids[std::size_t(i)] = last;
  }
  return out.finish(std::move(ids));
}

}  // namespace strata::detail
