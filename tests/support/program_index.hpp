// SPDX-License-Identifier: MIT
#pragma once
/// The planners of the random programs' indexing rows (tests/support/program_ops.hpp:
/// ix, oix, vix, take), and the index spec a node of those rows applies
/// (program_draw.hpp has the other planners).
#include <cstdint>
#include <optional>
#include <vector>

#include <strata.hpp>

#include "support/program_draw.hpp"

namespace strata::testing::program {

// Index entries for ix, oix and vix: groups of four integers in ints, (kind, p, q, r):
// 0 all; 1 the position p; 2 the slice p:q:r (INT64_MIN: absent); 3 newaxis; 4 the next
// index tensor of n.index (positions or a mask).

/// One basic entry (all, a position, a slice) for an axis of `size`.
inline void basic_entry(Draw& d, ProgNode& n, int64_t size) {
  const int kind = size == 0 ? 0 : d.pick(3);
  if (kind == 1) {
    n.ints.insert(n.ints.end(), {1, d.between(-size, size - 1), 0, 0});
  } else if (kind == 2) {
    const int64_t steps[] = {-2, -1, 1, 2};
    n.ints.insert(n.ints.end(), {2, d.coin() ? kAbsent : d.between(-size, size),
                                 d.coin() ? kAbsent : d.between(-size, size), steps[d.pick(4)]});
  } else {
    n.ints.insert(n.ints.end(), {0, 0, 0, 0});
  }
}
/// x.ix(...): a basic entry per axis, and a newaxis somewhere half the time.
inline bool basic_index(Draw& d, ProgNode& n) {
  const Shape& s = d.shape(n.a);
  const int64_t at = d.coin() ? d.between(0, s.ndim()) : -1;
  for (int64_t i = 0; i <= s.ndim(); ++i) {
    if (i == at) n.ints.insert(n.ints.end(), {3, 0, 0, 0});
    if (i < s.ndim()) basic_entry(d, n, s[std::size_t(i)]);
  }
  return true;
}
/// x.oix(...): per axis a basic entry, positions (1-D or 2-D) or a mask.
inline bool outer_index(Draw& d, ProgNode& n) {
  const Shape& s = d.shape(n.a);
  bool tensor = false;
  for (int64_t i = 0; i < s.ndim(); ++i) {
    const int64_t size = s[std::size_t(i)];
    if (size > 0 && d.pick(3) == 0) {
      tensor = true;
      n.ints.insert(n.ints.end(), {4, 0, 0, 0});
      n.index.push_back(d.coin() ? d.mask(size)
                                 : d.positions(size, d.coin() ? Shape{3} : Shape{2, 2}));
    } else {
      basic_entry(d, n, size);
    }
  }
  return tensor;
}
/// x.vix(...): positions on the leading one or two axes, broadcast together ([2, 1] with
/// [3], or one [4] or a mask), then basic entries.
inline bool vectorized_index(Draw& d, ProgNode& n) {
  const Shape& s = d.shape(n.a);
  if (s.ndim() == 0 || s[0] == 0) return false;
  const bool two = s.ndim() >= 2 && s[1] > 0 && d.coin();
  if (two) {
    n.ints.insert(n.ints.end(), {4, 0, 0, 0, 4, 0, 0, 0});
    n.index = {d.positions(s[0], {2, 1}), d.positions(s[1], {3})};
  } else {
    n.ints.insert(n.ints.end(), {4, 0, 0, 0});
    n.index = {d.pick(3) == 0 ? d.mask(s[0]) : d.positions(s[0], {4})};
  }
  for (int64_t i = two ? 2 : 1; i < s.ndim(); ++i) basic_entry(d, n, s[std::size_t(i)]);
  return true;
}
/// st::take: positions of shape [2, 2] along one axis.
inline bool take_positions(Draw& d, ProgNode& n) {
  if (!one_axis(d, n)) return false;
  const int64_t size =
      d.shape(n.a)[std::size_t(n.axis < 0 ? n.axis + d.shape(n.a).ndim() : n.axis)];
  if (size == 0) return false;
  n.index = {d.positions(size, {2, 2})};
  return true;
}

/// The index spec of an ix, oix or vix node (from its ints and index tensors).
inline std::vector<Index> index_spec(const ProgNode& n) {
  std::vector<Index> spec;
  std::size_t t = 0;
  auto opt = [](int64_t v) { return v == kAbsent ? std::optional<int64_t>() : std::optional(v); };
  for (std::size_t i = 0; i + 3 < n.ints.size(); i += 4) {
    switch (n.ints[i]) {
      case 1:
        spec.emplace_back(n.ints[i + 1]);
        break;
      case 2:
        spec.emplace_back(slice(opt(n.ints[i + 1]), opt(n.ints[i + 2]), n.ints[i + 3]));
        break;
      case 3:
        spec.emplace_back(newaxis);
        break;
      case 4:
        spec.emplace_back(n.index[t++]);
        break;
      default:
        spec.emplace_back(all);
    }
  }
  return spec;
}

}  // namespace strata::testing::program
