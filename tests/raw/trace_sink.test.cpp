// SPDX-License-Identifier: MIT
// Tests for raw/trace.hpp without jit/: any Sink attached to a thread sees each outermost raw
// call once, in order, with its operands, its results, what it is (the fuser's descriptor) and
// a kernel that runs it again; calls made inside a recorded call are not seen; one sink per
// thread; after detach nothing is seen.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "raw/ops.hpp"
#include "raw/trace.hpp"
#include "support/message_of.hpp"
#include "support/naive.hpp"

namespace st = strata;
namespace raw = strata::raw;
namespace trace = strata::raw::trace;

namespace {

/// Keeps what it is handed.
class KeepingSink final : public trace::Sink {
 public:
  struct Call {
    std::string op;
    trace::Effect effect;
    std::vector<st::RawTensor> in, out;
    trace::Kernel kernel;
    trace::Elementwise ew;
  };
  std::vector<Call> calls;
  int reads = 0;

  void read(std::string_view, const st::RawTensor&) override { ++reads; }
  void append(std::string_view op, trace::Effect effect, std::vector<st::RawTensor> in,
              std::span<const st::RawTensor> out, trace::Kernel kernel,
              trace::Elementwise ew) override {
    calls.push_back(
        {std::string(op), effect, std::move(in), {out.begin(), out.end()}, std::move(kernel), ew});
  }
  bool traced(const st::RawTensor&) const override { return false; }
};

}  // namespace

TEST_CASE("raw/trace: a sink sees each outermost raw call once, with a kernel to run it again",
          "[raw]") {
  const st::RawTensor a = raw::normal({3, 4}, 1, st::f64);
  const st::RawTensor b = raw::normal({2, 4}, 2, st::f64).transpose(0, 1);  // [4, 2], strided
  KeepingSink sink;
  trace::attach(sink);
  const st::RawTensor e = raw::unary(st::UnaryOp::exp, a);
  const st::RawTensor m = raw::matmul(e, b);  // what matmul calls inside is part of it
  const st::RawTensor c = raw::cast(m, st::f32);
  trace::detach(sink);
  (void)raw::unary(st::UnaryOp::sin, a);  // after detach: not seen

  REQUIRE(sink.calls.size() == 3);
  CHECK(sink.calls[0].op == "exp");
  CHECK(sink.calls[0].ew.kind == trace::Elementwise::Kind::unary);
  CHECK(sink.calls[0].ew.op == uint8_t(st::UnaryOp::exp));
  CHECK(sink.calls[1].op == "matmul");
  CHECK(sink.calls[1].ew.kind == trace::Elementwise::Kind::none);
  CHECK(sink.calls[2].op == "cast");
  CHECK(sink.calls[2].ew.kind == trace::Elementwise::Kind::cast);
  CHECK(sink.calls[2].ew.op == uint8_t(st::f32));
  for (const auto& call : sink.calls) CHECK(call.effect == trace::Effect::pure);
  CHECK(sink.reads == 4);  // exp's operand, matmul's two, cast's one

  // Each kernel, run again on its operands, gives the recorded result's bits.
  for (const auto& call : sink.calls) {
    std::vector<st::RawTensor> out(call.out.size());
    call.kernel(call.in, out);
    REQUIRE(out.size() == 1);
    CHECK(st::testing::bits(out[0]) == st::testing::bits(call.out[0]));
  }
  CHECK(st::testing::bits(sink.calls[2].out[0]) == st::testing::bits(c));
}

TEST_CASE("raw/trace: one sink per thread", "[raw]") {
  KeepingSink first, second;
  trace::attach(first);
  CHECK(trace::active());
  const std::string msg = st::testing::message_of<st::ValueError>([&] { trace::attach(second); });
  CHECK(msg.find("already recording") != std::string::npos);
  trace::detach(second);  // not the thread's sink: nothing happens
  CHECK(trace::active());
  trace::detach(first);
  CHECK_FALSE(trace::active());
}
