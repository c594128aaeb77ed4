// SPDX-License-Identifier: MIT
// st::vmap's specs and its error messages.
#include "ad/vmap.hpp"

#include <sstream>

namespace strata {

AxisSpec::AxisSpec(const std::map<std::string, AxisSpec>& keys) : kind_(Kind::map) {
  for (const auto& [k, v] : keys) keys_.emplace_back(k, v);
}

const AxisSpec* AxisSpec::find(const std::string& k) const {
  for (const auto& [key, v] : keys_) {
    if (key == k) return &v;
  }
  return nullptr;
}

std::string AxisSpec::str() const {
  std::ostringstream s;
  switch (kind_) {
    case Kind::leaf:
      if (axis_) {
        s << *axis_;
      } else {
        s << "none";
      }
      break;
    case Kind::list:
      s << "[";
      for (std::size_t i = 0; i < items_.size(); ++i) s << (i ? ", " : "") << items_[i].str();
      s << "]";
      break;
    case Kind::map:
      s << "{";
      for (std::size_t i = 0; i < keys_.size(); ++i) {
        s << (i ? ", " : "") << '"' << keys_[i].first << "\": " << keys_[i].second.str();
      }
      s << "}";
      break;
  }
  return s.str();
}

namespace detail {

void vmap_spec_mismatch(const AxisSpec& spec, const std::string& where, const std::string& value) {
  fail<ValueError>("vmap", "the axis spec ", spec.str(), " for ", where,
                   " does not match its structure (", value,
                   "): give one axis or st::none for a whole tree, or a list (map) with one "
                   "spec per element (key)");
}

void vmap_axis_range(std::string_view which, int64_t axis, const std::string& where,
                     const Shape& shape, int64_t rank) {
  fail<IndexError>("vmap", which, " axis ", axis, " is out of range for ", where, " of shape ",
                   shape, " (valid: ", -rank, " to ", rank - 1, ")");
}

int64_t vmap_batch_size(const std::vector<VmapSize>& sizes) {
  if (sizes.empty()) {
    fail<ValueError>("vmap",
                     "in_axes maps no argument (every spec is st::none): map at least one "
                     "argument along an axis");
  }
  const VmapSize& first = sizes.front();
  const int64_t n = first.shape[std::size_t(first.axis)];
  for (const VmapSize& s : sizes) {
    const int64_t m = s.shape[std::size_t(s.axis)];
    if (m != n) {
      fail<ShapeError>("vmap", "the mapped axes hold different numbers of examples: ", first.where,
                       " has ", n, " (axis ", first.axis, " of shape ", first.shape, "), ", s.where,
                       " has ", m, " (axis ", s.axis, " of shape ", s.shape, ")");
    }
  }
  return n;
}

void vmap_unmapped_output(const std::string& where) {
  fail<ValueError>("vmap", "out_axes is st::none for ", where,
                   ", but it differs between examples (it depends on a mapped argument): give "
                   "it an axis");
}

Shape move_axis(int64_t n, int64_t from, int64_t to) {
  Shape perm;
  for (int64_t i = 0; i < n; ++i) {
    if (i != from) perm.push_back(i);
  }
  perm.insert(std::size_t(to), from);
  return perm;
}

}  // namespace detail
}  // namespace strata
