// SPDX-License-Identifier: MIT
// oneDNN's direct convolutions for f32 on the CPU (raw/conv.hpp): forward, backward data
// (the input's gradient) and backward weights (the weight's gradient).
//
// Determinism: the batch is cut into pieces chosen from the shapes alone, and every piece is
// one single-threaded oneDNN call that strata's pool runs (as matmul's tiles), so no piece's
// arithmetic depends on the thread count. The forward pass and the input's gradient write
// disjoint examples; the weight's gradient sums over the batch, so each piece writes its own
// partial gradient and the partials are added in piece order.
//
// Layouts: each call lets oneDNN choose the layouts its kernels want (format_tag::any, the
// blocked nChw16c and weight layouts on AVX-512) and reorders the piece's plain operands
// into them and its result back: a direct convolution on plain layouts is oneDNN's im2col
// path ("gemm:jit"), the slow one (docs/perf-history/2026-12-07-conv-kernels.md).
#include "raw/cpu/conv_dnnl.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "core/parallel.hpp"

#if defined(STRATA_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
extern "C" void omp_set_num_threads(int);  // libgomp, oneDNN's runtime
#endif

namespace strata::detail {

#if defined(STRATA_HAVE_DNNL)
namespace {

using dnnl::memory;

// How the batch is cut: a piece takes as many examples as keep its input and output within
// kPieceBytes (a core's L2 on current x86 server CPUs, so that the blocked copies oneDNN
// reorders them into stay in cache: larger pieces ran slower on a ResNet stem, single
// examples slower on LeNet's small layers), but at least kPieceMacs multiply-adds (each
// oneDNN call costs a few microseconds of setup), and a call has at most kMaxPieces pieces
// (docs/perf-history/2026-12-07-conv-kernels.md).
constexpr double kPieceBytes = double(1 << 20);
constexpr double kPieceMacs = double(1 << 22);
constexpr int64_t kMaxPieces = 64;

/// The operands of one piece in oneDNN's terms: dims of x, w (grouped when groups > 1) and
/// y for `n` examples, and the geometry.
struct Dims {
  memory::dims x, w, y, stride, dilate, pad_l, pad_r;
  memory::format_tag x_tag, w_tag;
};

Dims dims_of(const Shape& x, const Shape& w, const Shape& y, int64_t n, const ConvGeometry& g) {
  using tag = memory::format_tag;
  const int64_t k = x.ndim() - 2;
  static constexpr tag data_tags[] = {tag::ncw, tag::nchw, tag::ncdhw};
  static constexpr tag weight_tags[] = {tag::oiw, tag::oihw, tag::oidhw};
  static constexpr tag group_tags[] = {tag::goiw, tag::goihw, tag::goidhw};
  Dims d;
  d.x = {n, x[1]};
  d.y = {n, y[1]};
  d.w = g.groups > 1 ? memory::dims{g.groups, w[0] / g.groups, w[1]} : memory::dims{w[0], w[1]};
  for (int64_t i = 0; i < k; ++i) {
    d.x.push_back(x[2 + i]);
    d.y.push_back(y[2 + i]);
    d.w.push_back(w[2 + i]);
    d.stride.push_back(g.stride[i]);
    d.dilate.push_back(g.dilation[i] - 1);  // oneDNN counts the gaps between taps
    d.pad_l.push_back(g.padding[i]);
    // The end padding that makes the output size exact: less than the start's (negative:
    // a crop) where the last stride does not fit.
    const int64_t extent = g.dilation[i] * (w[2 + i] - 1) + 1;
    d.pad_r.push_back((y[2 + i] - 1) * g.stride[i] + extent - x[2 + i] - g.padding[i]);
  }
  d.x_tag = data_tags[k - 1];
  d.w_tag = g.groups > 1 ? group_tags[k - 1] : weight_tags[k - 1];
  return d;
}

const dnnl::engine& cpu_engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// `user` as the layout `want`: itself, or a reordered copy (memory objects are handles).
memory reordered_in(memory user, const memory::desc& want, dnnl::stream& s) {
  if (user.get_desc() == want) return user;
  memory m(want, cpu_engine());
  dnnl::reorder(user, m).execute(s, user, m);
  return m;
}

/// One piece of n examples, on this thread: a, b and out point at its part of each operand.
void run_piece(ConvPass pass, const Dims& d, float* a, float* b, float* out) {
  thread_local const bool single = (omp_set_num_threads(1), true);
  (void)single;
  thread_local dnnl::stream s(cpu_engine());
  const dnnl::engine& eng = cpu_engine();
  const memory::data_type f32 = memory::data_type::f32;
  const memory::desc x_any(d.x, f32, memory::format_tag::any);
  const memory::desc w_any(d.w, f32, memory::format_tag::any);
  const memory::desc y_any(d.y, f32, memory::format_tag::any);
  const memory::desc x_plain(d.x, f32, d.x_tag), w_plain(d.w, f32, d.w_tag);
  const memory::desc y_plain(d.y, f32, d.x_tag);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const auto algo = dnnl::algorithm::convolution_direct;
  const dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training, algo, x_any, w_any, y_any,
                                      d.stride, d.dilate, d.pad_l, d.pad_r),
      attr, eng);
  auto run = [&](const dnnl::primitive& p, const auto& pd, int out_arg, memory user_out,
                 std::vector<std::pair<int, memory>> ins) {
    std::unordered_map<int, memory> args;
    for (auto& [arg, m] : ins)
      args[arg] = reordered_in(m, pd.query_md(dnnl::query::exec_arg_md, arg), s);
    const memory::desc out_md = pd.query_md(dnnl::query::exec_arg_md, out_arg);
    memory result = out_md == user_out.get_desc() ? user_out : memory(out_md, eng);
    args[out_arg] = result;
    memory scratch(pd.scratchpad_desc(), eng);
    args[DNNL_ARG_SCRATCHPAD] = scratch;
    p.execute(s, args);
    if (result != user_out) dnnl::reorder(result, user_out).execute(s, result, user_out);
    s.wait();
  };
  if (pass == ConvPass::forward) {
    run(dnnl::convolution_forward(fwd), fwd, DNNL_ARG_DST, memory(y_plain, eng, out),
        {{DNNL_ARG_SRC, memory(x_plain, eng, a)}, {DNNL_ARG_WEIGHTS, memory(w_plain, eng, b)}});
  } else if (pass == ConvPass::input_grad) {
    const dnnl::convolution_backward_data::primitive_desc bwd(
        dnnl::convolution_backward_data::desc(algo, x_any, w_any, y_any, d.stride, d.dilate,
                                              d.pad_l, d.pad_r),
        attr, eng, fwd);
    run(dnnl::convolution_backward_data(bwd), bwd, DNNL_ARG_DIFF_SRC, memory(x_plain, eng, out),
        {{DNNL_ARG_DIFF_DST, memory(y_plain, eng, a)},
         {DNNL_ARG_WEIGHTS, memory(w_plain, eng, b)}});
  } else {
    const dnnl::convolution_backward_weights::primitive_desc bwd(
        dnnl::convolution_backward_weights::desc(algo, x_any, w_any, y_any, d.stride, d.dilate,
                                                 d.pad_l, d.pad_r),
        attr, eng, fwd);
    run(dnnl::convolution_backward_weights(bwd), bwd, DNNL_ARG_DIFF_WEIGHTS,
        memory(w_plain, eng, out),
        {{DNNL_ARG_SRC, memory(x_plain, eng, a)}, {DNNL_ARG_DIFF_DST, memory(y_plain, eng, b)}});
  }
}

int64_t product(const Shape& s, int64_t from) {
  int64_t n = 1;
  for (int64_t i = from; i < s.ndim(); ++i) n *= s[i];
  return n;
}

}  // namespace

bool dnnl_conv_available() { return true; }

void dnnl_conv(ConvPass pass, const RawTensor& out, const RawTensor& a, const RawTensor& b,
               const ConvGeometry& g) {
  const Shape& out_shape = out.shape();
  const Shape& x = pass == ConvPass::forward      ? a.shape()
                   : pass == ConvPass::input_grad ? out_shape
                                                  : a.shape();
  const Shape& w = pass == ConvPass::weight_grad ? out_shape : b.shape();
  const Shape& y = pass == ConvPass::forward      ? out_shape
                   : pass == ConvPass::input_grad ? a.shape()
                                                  : b.shape();
  const int64_t n = x[0];
  const double macs = double(product(y, 1)) * double(product(w, 1));  // per example
  const double bytes = 4.0 * double(product(x, 1) + product(y, 1));   // per example
  int64_t chunk = std::max<int64_t>(
      {1, int64_t(kPieceBytes / bytes), int64_t(std::ceil(kPieceMacs / std::max(macs, 1.0)))});
  chunk = std::max(std::min(chunk, n), (n + kMaxPieces - 1) / kMaxPieces);
  const int64_t pieces = (n + chunk - 1) / chunk;
  float* const pa = a.data<float>();
  float* const pb = b.data<float>();
  float* const po = out.data<float>();
  const int64_t x_ex = product(x, 1), y_ex = product(y, 1), w_n = product(w, 0);
  std::vector<float> partial(pass == ConvPass::weight_grad && pieces > 1 ? std::size_t(pieces * w_n)
                                                                         : 0);
  try {
    parallel_for(0, pieces, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int64_t n0 = p * chunk, nb = std::min(n, n0 + chunk) - n0;
        const Dims d = dims_of(x, w, y, nb, g);
        switch (pass) {
          case ConvPass::forward:
            run_piece(pass, d, pa + n0 * x_ex, pb, po + n0 * y_ex);
            break;
          case ConvPass::input_grad:
            run_piece(pass, d, pa + n0 * y_ex, pb, po + n0 * x_ex);
            break;
          case ConvPass::weight_grad:
            run_piece(pass, d, pa + n0 * x_ex, pb + n0 * y_ex,
                      pieces > 1 ? partial.data() + p * w_n : po);
            break;
        }
      }
    });
  } catch (const dnnl::error& e) {
    fail<ValueError>("conv", "oneDNN's convolution failed (status ", int(e.status), ": ", e.what(),
                     ") for input ", x, ", weight ", w, ", output ", y);
  }
  if (!partial.empty()) {
    // The batch's sum, piece by piece in order: the same bits for any thread count.
    std::copy(partial.begin(), partial.begin() + w_n, po);
    for (int64_t p = 1; p < pieces; ++p) {
      const float* q = partial.data() + p * w_n;
      for (int64_t i = 0; i < w_n; ++i) po[i] += q[i];
    }
  }
}

#else

bool dnnl_conv_available() { return false; }

void dnnl_conv(ConvPass, const RawTensor&, const RawTensor&, const RawTensor&,
               const ConvGeometry&) {
  fail<ValueError>("conv", "this build has no oneDNN (has_conv_kernels is false)");
}

#endif

}  // namespace strata::detail
