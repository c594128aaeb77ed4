// SPDX-License-Identifier: MIT
#pragma once
/// Reads the PyTorch float64 reference cases that tests/ad/data/transformer_torch.py writes
/// (tests/ad/data/transformer_torch.txt): each case names an op and its parameters and holds
/// named f64 tensors (inputs, a cotangent `cot`, the output `out`, gradients `g_<input>`).
/// And the layouts the tests feed them in: each input also as a transposed and as a
/// step-2 sliced view holding the same values.
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

#include "support/files.hpp"

namespace strata::testing {

/// One configuration: `case <op> <key>=<value> ...` and its tensors.
struct TorchCase {
  std::string op;
  std::map<std::string, std::string> params;
  std::map<std::string, Tensor> tensors;
  int line = 0;  ///< where the case starts in the file (for failure messages)

  double num(const std::string& key) const { return std::stod(params.at(key)); }
  int64_t integer(const std::string& key) const { return std::stoll(params.at(key)); }
  bool flag(const std::string& key) const { return params.at(key) == "1"; }
  bool has(const std::string& name) const { return tensors.count(name) != 0; }
  const Tensor& at(const std::string& name) const { return tensors.at(name); }
  /// "1,2,3" as a Shape.
  Shape shape(const std::string& key) const {
    Shape s;
    std::stringstream in(params.at(key));
    for (std::string part; std::getline(in, part, ',');) s.push_back(std::stoll(part));
    return s;
  }
};

/// Every case in `path` whose op is `op`, in file order.
inline std::vector<TorchCase> read_torch_cases(const std::string& path, const std::string& op) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error("cannot open " + path);
  std::vector<TorchCase> out;
  TorchCase current;
  bool keep = false;
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    std::istringstream in(line);
    std::string kind;
    in >> kind;
    if (kind == "case") {
      current = TorchCase{};
      current.line = number;
      in >> current.op;
      keep = current.op == op;
      for (std::string kv; in >> kv;) {
        const auto eq = kv.find('=');
        current.params[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    } else if (kind == "t" && keep) {
      std::string name;
      int64_t ndim = 0;
      in >> name >> ndim;
      Shape shape;
      int64_t n = 1;
      for (int64_t i = 0; i < ndim; ++i) {
        int64_t d = 0;
        in >> d;
        shape.push_back(d);
        n *= d;
      }
      std::vector<double> values(static_cast<std::size_t>(n));
      for (double& v : values) {
        std::string word;  // "inf", "nan" and "-inf" too, which operator>> does not read
        in >> word;
        v = std::stod(word);
      }
      current.tensors[name] = from_vector(values, shape);
    } else if (kind == "end" && keep) {
      out.push_back(current);
    }
  }
  return out;
}

/// The same values as x (f64) in another layout: kind 0 x itself, 1 a transposed view (of
/// the last two axes; x itself below rank 2), 2 a view with stride 2 along the last axis.
inline Tensor in_layout(const Tensor& x, int kind) {
  const int64_t r = x.shape().ndim();
  if (kind == 1 && r >= 2) {
    const Tensor t = transpose(x, -1, -2);
    return transpose(from_vector(t.to_vector<double>(), t.shape()), -1, -2);
  }
  if (kind == 2 && r >= 1) {
    const Tensor pair = stack({x, x * 0.0 - 7.0}, -1);  // [..., n, 2], the junk at odd places
    const Tensor wide = from_vector(pair.to_vector<double>(), pair.shape());
    return wide.ix(ellipsis, 0);
  }
  return x;
}

/// The PyTorch float64 references of the transformer pieces (ad/data/transformer_torch.py).
inline std::string transformer_torch_file() {
  return (tests_dir() / "ad/data/transformer_torch.txt").string();
}

/// got equal to PyTorch's want up to tol, relative and absolute, element by element.
inline void require_torch_close(const Tensor& got, const Tensor& want, const std::string& what,
                                double tol = 1e-10) {
  INFO(what << ": shape " << got.shape() << " vs " << want.shape());
  REQUIRE(got.shape() == want.shape());
  const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO(what << " element " << i);
    CHECK(g[i] == Approx(w[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace strata::testing
