// SPDX-License-Identifier: MIT
// Tests for nn/json.hpp: a tensor's JSON form round trips every dtype and
// layout; NaN and infinities travel as strings; integers that do not fit the
// dtype, deeply nested values and text that is not UTF-8 are clear
// st::Errors with bounded messages.
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include "file_cases.hpp"
#include "helpers.hpp"
#include "nn/json.hpp"

using namespace nn_test;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using json = nlohmann::json;

TEST_CASE("to_json / from_json for one tensor", "[nn]") {
  for (const auto& [name, t] : every_kind()) {
    INFO(name);
    const json j = t;
    CHECK(j["shape"].size() == std::size_t(t.ndim()));
    require_same(j.get<st::Tensor>(), t);
  }
  const json j = st::from_vector(std::vector<double>{1, 2, 3, 4}, {2, 2});
  CHECK(j == json::parse(R"({"dtype":"F64","shape":[2,2],"data":[1.0,2.0,3.0,4.0]})"));
  auto bad = [](const char* text) { return json::parse(text).get<st::Tensor>(); };
  CHECK_THROWS_AS(bad(R"([1, 2])"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[2]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[3],"data":[1,2]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[-1],"data":[]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"I64","shape":[1],"data":[1.5]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"I32","shape":[1],"data":[4294967296]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"BOOL","shape":[1],"data":[1]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"F32","shape":[1],"data":["x"]})"), st::ValueError);
  CHECK_THROWS_AS(bad(R"({"dtype":"U8","shape":[1],"data":[1]})"), st::DTypeError);
}

TEST_CASE("from_json refuses integers that do not fit the dtype instead of wrapping them", "[nn]") {
  auto msg = [](const std::string& dtype, const std::string& value) {
    const json j =
        json::parse(R"({"dtype":")" + dtype + R"(","shape":[1],"data":[)" + value + "]}");
    return message_of<st::ValueError>([&] { (void)j.get<st::Tensor>(); });
  };
  // Each once loaded as a wrapped value (-1, INT64_MIN, -1).
  CHECK_THAT(msg("I64", "18446744073709551615"), StartsWith("from_json: ") &&
                                                     Contains("18446744073709551615") &&
                                                     Contains("out of range for I64"));
  CHECK_THAT(msg("I64", "9223372036854775808"),
             Contains("9223372036854775808") && Contains("out of range for I64"));
  CHECK_THAT(msg("I32", "18446744073709551615"),
             Contains("18446744073709551615") && Contains("out of range for I32"));
  CHECK_THAT(msg("I32", "2147483648"), Contains("2147483648") && Contains("I32"));
  CHECK_THAT(msg("I32", "-2147483649"), Contains("-2147483649") && Contains("I32"));
  CHECK_THAT(msg("I64", "100000000000000000000"),
             Contains("out of range for I64"));  // a float to nlohmann
  CHECK_THAT(msg("I64", "1.5"), Contains("1.5") && Contains("not an integer"));
  CHECK_THAT(msg("I32", "\"NaN\""), Contains("not an integer"));
  // F32 values beyond its range would become infinities.
  CHECK_THAT(msg("F32", "1e39"), Contains("out of range for F32"));
  CHECK_THAT(msg("F32", "-3.5e38"), Contains("out of range for F32"));
  CHECK_THAT(msg("F64", "\"nan\""), Contains("not a number"));
  // The extremes that fit load exactly.
  const json j = json::parse(
      R"({"dtype":"I64","shape":[4],"data":[-9223372036854775808,9223372036854775807,0,-1]})");
  CHECK(j.get<st::Tensor>().to_vector<int64_t>() ==
        std::vector<int64_t>{INT64_MIN, INT64_MAX, 0, -1});
  const json k = json::parse(R"({"dtype":"I32","shape":[2],"data":[-2147483648,2147483647]})");
  CHECK(k.get<st::Tensor>().to_vector<int32_t>() == std::vector<int32_t>{INT32_MIN, INT32_MAX});
  // FLT_MAX as written by a shortest-repr printer (slightly above FLT_MAX as a double).
  const json f = json::parse(R"({"dtype":"F32","shape":[2],"data":[3.4028235e38,-3.4028235e38]})");
  CHECK(f.get<st::Tensor>().to_vector<float>() ==
        std::vector<float>{std::numeric_limits<float>::max(), -std::numeric_limits<float>::max()});
}

TEST_CASE("NaN and infinities round trip through the JSON text as strings", "[nn]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> v{1.5, nan, inf, -inf, -0.0, 1e-310};
  for (st::DType dt : {st::f64, st::f32}) {
    INFO(dt);
    const st::Tensor t = st::from_vector(v, {2, 3}).to(dt);
    const json j = t;
    const std::string text = j.dump();  // never `null`, which would not load back
    CHECK_THAT(text, Contains(R"("NaN","Infinity","-Infinity")"));
    CHECK_THAT(text, !Contains("null"));
    const st::Tensor back = json::parse(text).get<st::Tensor>();
    REQUIRE(back.dtype() == dt);
    REQUIRE(back.shape() == t.shape());
    const std::vector<double> got = back.to_vector<double>(), want = t.to_vector<double>();
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO(i);
      if (std::isnan(want[i])) {
        CHECK(std::isnan(got[i]));
      } else {
        CHECK(got[i] == want[i]);
        CHECK(std::signbit(got[i]) == std::signbit(want[i]));
      }
    }
  }
  // Written by hand, as in a configuration file.
  const json h = json::parse(R"({"dtype":"F32","shape":[3],"data":["-Infinity", 2, "NaN"]})");
  const std::vector<float> got = h.get<st::Tensor>().to_vector<float>();
  CHECK(got[0] == -std::numeric_limits<float>::infinity());
  CHECK(got[1] == 2.0f);
  CHECK(std::isnan(got[2]));
}

TEST_CASE("from_json on 100k-deep, huge or non-UTF-8 values throws a bounded st::Error", "[nn]") {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto msg = [](const json& j) {
    const std::string m = message_of<st::Error>([&] { (void)j.get<st::Tensor>(); });
    CHECK_THAT(m, StartsWith("from_json: "));
    CHECK(m.size() < 600);
    return m;
  };
  CHECK_THAT(msg(json::parse(deep)), Contains("a tensor must be a JSON object, got [[[...]]]"));
  CHECK_THAT(msg(json::parse(R"({"dtype":"F32","shape":[1],"data":[)" + deep + "]}")),
             Contains("data value [[[...]]] is not a number"));
  CHECK_THAT(msg(json::parse(R"({"dtype":"F32","shape":)" + deep + R"(,"data":[]})")),
             Contains("shape [[[...]]]"));
  CHECK_THAT(msg(json::parse(R"({"dtype":)" + deep + R"(,"shape":[1],"data":[1]})")),
             Contains("dtype [[[...]]]"));
  CHECK_THAT(msg(json::parse(R"({"dtype":"F32","shape":[2],"data":)" + deep + "}")),
             Contains("got [[[...]]]"));
  // A long array and a long string are quoted by a prefix.
  json big = json::parse(R"({"dtype":"F32","shape":[3]})");
  big["data"] = std::vector<double>(100000, 0.5);
  CHECK_THAT(msg(big), Contains("array of 3 values") && Contains("[0.5, 0.5"));
  json long_dtype = json::parse(R"({"shape":[1],"data":[1]})");
  long_dtype["dtype"] = std::string(100000, 'F');
  CHECK_THAT(msg(long_dtype), Contains("(100000 bytes)"));
  // Strings that are not UTF-8 (which nlohmann's dump() would refuse with its own type_error).
  json latin1 = json::parse(R"({"shape":[1],"data":[1]})");
  latin1["dtype"] = "F\xE9";
  CHECK_THAT(message_of<st::DTypeError>([&] { (void)latin1.get<st::Tensor>(); }),
             Contains("dtype 'F\\xE9'"));
  json bad_value = json::parse(R"({"dtype":"F64","shape":[1]})");
  bad_value["data"] = json::array({"\xE9"});
  CHECK_THAT(msg(bad_value), Contains("data value '\\xE9' is not a number"));
}
