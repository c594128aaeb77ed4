// SPDX-License-Identifier: MIT
#pragma once
/// A vector that keeps up to N elements inline and moves to the heap beyond,
/// so shapes and strides of ordinary rank never allocate and any rank works.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <type_traits>

namespace strata::detail {

template <class T, std::size_t N = 8>
class SmallVec {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVec holds trivially copyable values");

 public:
  using value_type = T;
  using iterator = T*;
  using const_iterator = const T*;

  SmallVec() = default;
  explicit SmallVec(std::size_t n, T value = T{}) { assign_fill(n, value); }
  SmallVec(std::initializer_list<T> init) { assign_range(init.begin(), init.end()); }
  template <std::input_iterator It>
  SmallVec(It first, It last) {
    assign_range(first, last);
  }
  SmallVec(const SmallVec& o) { copy_from(o); }
  SmallVec(SmallVec&& o) noexcept { steal(o); }
  SmallVec& operator=(const SmallVec& o) {
    if (this != &o) copy_from(o);
    return *this;
  }
  SmallVec& operator=(SmallVec&& o) noexcept {
    if (this != &o) {
      heap_.reset();
      steal(o);
    }
    return *this;
  }

  T* data() { return heap_ ? heap_.get() : inline_; }
  const T* data() const { return heap_ ? heap_.get() : inline_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T* begin() { return data(); }
  T* end() { return data() + size_; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  T& operator[](std::size_t i) { return data()[i]; }
  const T& operator[](std::size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }
  const T& back() const { return data()[size_ - 1]; }

  void push_back(T v) {
    reserve(size_ + 1);
    data()[size_++] = v;
  }
  void pop_back() { --size_; }
  void resize(std::size_t n, T value = T{}) {
    reserve(n);
    for (std::size_t i = size_; i < n; ++i) data()[i] = value;
    size_ = n;
  }
  void insert(std::size_t pos, T v) {
    reserve(size_ + 1);
    T* d = data();
    std::memmove(d + pos + 1, d + pos, (size_ - pos) * sizeof(T));
    d[pos] = v;
    ++size_;
  }
  void erase(std::size_t pos) {
    T* d = data();
    std::memmove(d + pos, d + pos + 1, (size_ - pos - 1) * sizeof(T));
    --size_;
  }
  void reserve(std::size_t n) {
    if (n <= capacity_) return;
    std::size_t cap = std::max(n, 2 * capacity_);
    std::unique_ptr<T[]> fresh(new T[cap]);
    std::memcpy(fresh.get(), data(), size_ * sizeof(T));
    heap_ = std::move(fresh);
    capacity_ = cap;
  }

  friend bool operator==(const SmallVec& a, const SmallVec& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  template <class It>
  void assign_range(It first, It last) {
    size_ = 0;
    for (; first != last; ++first) push_back(static_cast<T>(*first));
  }
  void assign_fill(std::size_t n, T value) {
    size_ = 0;
    resize(n, value);
  }
  // Shapes and strides are copied and moved on every tensor operation: the inline case
  // copies the whole fixed-size buffer (a few vector moves, no call, no loop).
  void copy_from(const SmallVec& o) {
    if (o.size_ > N) {
      size_ = 0;
      reserve(o.size_);
      std::memcpy(data(), o.data(), o.size_ * sizeof(T));
    } else {
      heap_.reset();
      capacity_ = N;
      if (o.heap_) {  // grown once, shrunk since: the elements are on o's heap
        std::memcpy(inline_, o.heap_.get(), o.size_ * sizeof(T));
      } else {
        std::memcpy(inline_, o.inline_, sizeof(inline_));
      }
    }
    size_ = o.size_;
  }
  void steal(SmallVec& o) {
    size_ = o.size_;
    capacity_ = o.capacity_;
    if (o.heap_) {
      heap_ = std::move(o.heap_);
    } else {
      std::memcpy(inline_, o.inline_, sizeof(inline_));
    }
    o.size_ = 0;
    o.capacity_ = N;
  }

  T inline_[N] = {};
  std::unique_ptr<T[]> heap_;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace strata::detail
