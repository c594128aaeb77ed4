// SPDX-License-Identifier: MIT
#pragma once
/// st::Key: randomness as a value (DESIGN §9), after jax.random. A key is 64 bits; every random
/// number strata draws from it is Philox4x32-10 (core/random.hpp) of the element's position
/// under the key, so a draw depends on the key and the shape only: never on the thread count,
/// the device or what was drawn before. New keys come from old ones by `split` and `fold_in`,
/// Philox of the index or data under the key in their own counter domains (word 2 of the
/// counter: draws use 0, split 1, fold_in 2), so no derived key's bits are also a draw's.
///
///   st::Key key(42);
///   auto [k_init, k_drop] = st::split2(key);          // or st::split(key, n)
///   st::Tensor y = st::dropout(x, 0.1, st::fold_in(k_drop, step));
#include <array>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/random.hpp"

namespace strata {

/// A random key (jax.random's PRNG key): a 64-bit value that determines every number drawn
/// from it. Keys are cheap values: copy them, store them, derive new ones with split and
/// fold_in; drawing twice from one key gives the same numbers.
class Key {
 public:
  /// The key of a seed. Example: `st::Key key(0);`
  constexpr explicit Key(uint64_t seed) : bits_(seed) {}
  /// The 64 bits: the Philox key of every draw from this key (the seed of st::rand).
  constexpr uint64_t bits() const { return bits_; }
  /// Keys are equal when their bits are.
  friend constexpr bool operator==(Key, Key) = default;

 private:
  uint64_t bits_;
};

namespace detail {
/// Word 2 of the Philox counter for each use of a key: draws (st::rand: 0), split, fold_in.
inline constexpr uint32_t kKeySplitDomain = 1, kKeyFoldDomain = 2;
/// The key derived from `key` by index i in `domain`: words 0 and 1 of Philox((i, domain), key).
inline Key derive_key(Key key, uint64_t i, uint32_t domain) {
  const uint64_t k = key.bits();
  const std::array<uint32_t, 4> w =
      philox4x32({uint32_t(i), uint32_t(i >> 32), domain, 0u}, {uint32_t(k), uint32_t(k >> 32)});
  return Key((uint64_t{w[1]} << 32) | w[0]);
}
}  // namespace detail

/// n new keys from `key` (jax.random.split), statistically independent of each other and of
/// draws from `key`. Key i depends on key and i only, so split(key, 3)[0] == split(key, 2)[0].
/// Throws ValueError for n < 0. Example: `std::vector<st::Key> ks = st::split(key, 4);`
inline std::vector<Key> split(Key key, int64_t n) {
  if (n < 0) detail::fail<ValueError>("split", "n = ", n, " keys: n must be >= 0");
  std::vector<Key> keys;
  keys.reserve(std::size_t(n));
  for (int64_t i = 0; i < n; ++i)
    keys.push_back(detail::derive_key(key, uint64_t(i), detail::kKeySplitDomain));
  return keys;
}
/// Two new keys from `key`: split(key, 2) as a pair, for structured bindings.
/// Example: `auto [k1, k2] = st::split2(key);`
inline std::pair<Key, Key> split2(Key key) {
  return {detail::derive_key(key, 0, detail::kKeySplitDomain),
          detail::derive_key(key, 1, detail::kKeySplitDomain)};
}
/// A new key from `key` and 64 bits of data (jax.random.fold_in): a step number, a layer
/// index, a rank. Distinct data give independent keys. Example: `st::fold_in(key, step)`.
inline Key fold_in(Key key, uint64_t data) {
  return detail::derive_key(key, data, detail::kKeyFoldDomain);
}

}  // namespace strata
