// SPDX-License-Identifier: MIT
// nn/text.hpp: the character tokenizer on tinyshakespeare (nanoGPT's numbers: 1,115,394
// characters, 65 symbols, a 1,003,854 / 111,540 split), random batches against the windows
// they must be, and the errors of bad input.
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "support/files.hpp"

namespace st = strata;
using Catch::Matchers::Contains;

namespace {

/// The project's copy of tinyshakespeare (data/).
std::string shakespeare_path() {
  return (st::testing::tests_dir().parent_path() / "data" / "tinyshakespeare.txt").string();
}

}  // namespace

TEST_CASE("CharTokenizer on tinyshakespeare: nanoGPT's vocabulary and split", "[nn][text]") {
  const std::string text = st::nn::read_text(shakespeare_path());
  REQUIRE(text.size() == 1115394);
  const st::nn::CharTokenizer tok(text);
  CHECK(tok.vocab_size() == 65);
  CHECK(tok.symbols().substr(0, 3) == "\n !");
  CHECK(tok.symbols().substr(tok.symbols().size() - 3) == "xyz");
  const st::Tensor ids = tok.encode(text);
  REQUIRE(ids.shape() == st::Shape{1115394});
  CHECK(ids.dtype() == st::i64);
  CHECK(tok.decode(ids) == text);
  const std::vector<int64_t> first = st::Tensor(ids.ix(st::slice(0, 5))).to_vector<int64_t>();
  // "First": the tokens are the ranks of the bytes among the 65 symbols.
  for (std::size_t i = 0; i < first.size(); ++i) {
    CHECK(tok.symbols()[std::size_t(first[i])] == text[i]);
  }
  const auto [train, val] = st::nn::split_train_val(ids, 0.9);
  CHECK(train.shape() == st::Shape{1003854});
  CHECK(val.shape() == st::Shape{111540});
  CHECK(tok.decode(val).substr(0, 20) == text.substr(1003854, 20));
}

TEST_CASE("sample_batch: windows of the tokens and their shifts, one batch per key", "[nn][text]") {
  const st::Tensor tokens = st::arange(0, 100, 1, st::i64);  // token i at position i
  const int64_t batch = 64, block = 8;
  const auto [x, y] = st::nn::sample_batch(tokens, batch, block, st::Key(3));
  REQUIRE(x.shape() == st::Shape{batch, block});
  REQUIRE(y.shape() == st::Shape{batch, block});
  const std::vector<int64_t> xv = x.to_vector<int64_t>(), yv = y.to_vector<int64_t>();
  std::set<int64_t> starts;
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t s = xv[std::size_t(b * block)];
    starts.insert(s);
    CHECK(s >= 0);
    CHECK(s <= 100 - block - 1);
    for (int64_t t = 0; t < block; ++t) {
      CHECK(xv[std::size_t(b * block + t)] == s + t);
      CHECK(yv[std::size_t(b * block + t)] == s + t + 1);
    }
  }
  CHECK(starts.size() > 30);  // 64 draws from 92 starts: about 46 distinct
  const auto [x2, y2] = st::nn::sample_batch(tokens, batch, block, st::Key(3));
  CHECK(x2.to_vector<int64_t>() == xv);
  const auto [x3, y3] = st::nn::sample_batch(tokens, batch, block, st::fold_in(st::Key(3), 1));
  CHECK(x3.to_vector<int64_t>() != xv);
  // Three tokens and a block of 2 leave one window, the last: y ends at the last token.
  const auto [xs, ys] = st::nn::sample_batch(st::arange(0, 3, 1, st::i64), 4, 2, st::Key(0));
  CHECK(xs.to_vector<int64_t>() == std::vector<int64_t>{0, 1, 0, 1, 0, 1, 0, 1});
  CHECK(ys.to_vector<int64_t>() == std::vector<int64_t>{1, 2, 1, 2, 1, 2, 1, 2});
}

TEST_CASE("text: bad input is an error naming the problem", "[nn][text]") {
  const st::nn::CharTokenizer tok("abca");
  CHECK(tok.vocab_size() == 3);
  CHECK_THROWS_WITH(tok.encode("abz"),
                    Contains("byte 2") && Contains("'z'") && Contains("not in the vocabulary"));
  CHECK_THROWS_WITH(tok.decode(st::from_vector(std::vector<int64_t>{0, 3}, {2})),
                    Contains("token 1 is 3, outside the vocabulary [0, 3)"));
  CHECK_THROWS_AS(tok.decode(st::from_vector(std::vector<double>{0, 1}, {2})), st::DTypeError);
  CHECK_THROWS_AS(tok.decode(st::zeros({2, 2}, st::i64)), st::ShapeError);
  CHECK_THROWS_AS(st::nn::CharTokenizer(""), st::ValueError);
  const st::Tensor ids = st::arange(0, 10, 1, st::i64);
  CHECK_THROWS_WITH(st::nn::split_train_val(ids, 1.0), Contains("leaves a part empty"));
  CHECK_THROWS_WITH(st::nn::split_train_val(ids, 0.05), Contains("leaves a part empty"));
  CHECK_THROWS_WITH(st::nn::sample_batch(ids, 2, 10, st::Key(0)),
                    Contains("the tokens more than block"));
  CHECK_THROWS_AS(st::nn::sample_batch(ids, 0, 2, st::Key(0)), st::ValueError);
  CHECK_THROWS_AS(st::nn::sample_batch(st::zeros({2, 5}, st::i64), 1, 2, st::Key(0)),
                  st::ShapeError);
  CHECK_THROWS_WITH(st::nn::read_text("/nonexistent/strata.txt"), Contains("read_text"));
}
