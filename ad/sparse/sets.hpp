// SPDX-License-Identifier: MIT
#pragma once
/// The index sets the sparsity tracer (ad/sparse/tracer.hpp) carries: for each element of a
/// tensor, the sorted set of input positions it depends on (first order), or of the pairs of
/// input positions its second derivative may involve (packed by pair_key).
///
/// Each distinct set is stored once, in a table of sorted runs, and an element names its set
/// by id (-1: the empty set). A movement op (permute, slice, expand, index_select) then only
/// remaps ids and shares the table, so broadcasting a scalar that depends on every input costs
/// one id per element, not a copy of the set. The set operations build new tables and reuse
/// one output set for a run of elements whose operands are the same sets.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace strata::detail {

/// One set of int64 keys per element of a tensor: the tracer's dependencies or pairs.
class ElementSets {
 public:
  /// The distinct sets: set s is keys[offsets[s] .. offsets[s + 1]), sorted, no repeats.
  struct Table {
    std::vector<int64_t> offsets{0};  ///< one more than the number of sets
    std::vector<int64_t> keys;        ///< every set's keys, one sorted run each
  };

  /// The sets `ids` names in `table` (-1: empty), one per element.
  ElementSets(std::shared_ptr<const Table> table, std::vector<int64_t> ids)
      : table_(std::move(table)), ids_(std::move(ids)) {}

  /// The number of elements.
  int64_t size() const { return int64_t(ids_.size()); }
  /// Element i's set id in table() (-1: empty).
  int64_t id(int64_t i) const { return ids_[std::size_t(i)]; }
  /// Every element's set id.
  const std::vector<int64_t>& ids() const { return ids_; }
  /// The table the ids name.
  const std::shared_ptr<const Table>& table() const { return table_; }
  /// Element i's set, sorted.
  std::span<const int64_t> operator[](int64_t i) const { return set(id(i)); }
  /// The set with id s (empty for -1).
  std::span<const int64_t> set(int64_t s) const {
    if (s < 0) return {};
    const auto b = std::size_t(table_->offsets[std::size_t(s)]);
    const auto e = std::size_t(table_->offsets[std::size_t(s) + 1]);
    return {table_->keys.data() + b, e - b};
  }

 private:
  std::shared_ptr<const Table> table_;
  std::vector<int64_t> ids_;
};

/// Per-element sets; null when every element's set is empty (a constant), so constants cost
/// nothing and an op with a constant operand passes the other operand's sets on unchanged.
using Sets = std::shared_ptr<const ElementSets>;

/// The key of the unordered pair {i, j} of input positions (both below 2^31): the smaller in
/// the high half, so sorting keys sorts pairs row by row.
inline int64_t pair_key(int64_t i, int64_t j) { return i <= j ? (i << 32) | j : (j << 32) | i; }
/// The smaller position of a pair key.
inline int64_t pair_first(int64_t key) { return key >> 32; }
/// The larger position of a pair key.
inline int64_t pair_second(int64_t key) { return key & 0xffffffff; }

/// Builds new sets one at a time into a fresh table (the set operations below, and the
/// tracer's products and factorisations).
class SetBuilder {
 public:
  /// Adds the keys in `scratch` (any order, repeats allowed) as a new set and clears scratch:
  /// the set's id, or -1 when it is empty.
  int64_t add(std::vector<int64_t>& scratch);
  /// Adds a sorted run without repeats as a new set: its id, or -1 when it is empty.
  int64_t add_sorted(std::span<const int64_t> keys);
  /// The sets `ids` names in the table built (null when the table is empty).
  Sets finish(std::vector<int64_t> ids);

 private:
  std::shared_ptr<ElementSets::Table> table_ = std::make_shared<ElementSets::Table>();
};

/// n elements, element i the set {i}: the inputs of a trace.
Sets singletons(int64_t n);
/// The sets of s at the positions `from` (-1: the empty set), sharing s's table.
Sets gather(const Sets& s, std::span<const int64_t> from);
/// Element i: the union of element i of every operand (all of one size; null ones skipped).
Sets unite(const std::vector<Sets>& operands);
/// unite of two operands.
inline Sets unite(const Sets& a, const Sets& b) {
  if (!a) return b;
  if (!b || a == b) return a;
  return unite(std::vector<Sets>{a, b});
}
/// n_out sets: set g is the union of the sets of s at the elements i with dest[i] == g
/// (dest[i] == -1: element i goes nowhere). A reduction, a scatter, a matrix's union.
Sets reduce(const Sets& s, std::span<const int64_t> dest, int64_t n_out);
/// Element i: every pair_key(p, q) with p in a[i], q in b[i] (the second-order pairs a
/// product of the two introduces); a == b gives each element's pairs with itself.
Sets pairs_of(const Sets& a, const Sets& b);

}  // namespace strata::detail
