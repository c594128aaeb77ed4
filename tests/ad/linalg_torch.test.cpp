// SPDX-License-Identifier: MIT
// st::linalg's gradients against PyTorch 1.13's torch.linalg in float64, on fixed matrices:
// the constants come from tests/ad/data/linalg_torch.py (which writes the same inputs out), so
// the expected values are computed by an independent implementation.
#include <cmath>
#include <vector>

#include <catch2/catch.hpp>
#include <strata.hpp>

namespace st = strata;

namespace {

const std::vector<double> kCholeskyGrad{
    0.0751215737834048,   0.17936332367154253,  0.011775679392354445, 0.06644076760797875,
    0.17936332367154256,  0.07039563904846871,  0.11751707713664643,  -0.07343700177417754,
    0.011775679392354448, 0.11751707713664643,  0.046276912470723165, 0.03567004479042201,
    0.06644076760797876,  -0.07343700177417754, 0.03567004479042201,  0.07720763446589318};
const std::vector<double> kEighGrad{
    0.21426822734508788, -0.8746544575190359, -0.8179398448798783, -1.0001208768938805,
    -0.8746544575190359, 2.8073119903753154,  -0.2641455628100424, -0.1709776743252596,
    -0.8179398448798783, -0.2641455628100424, -0.5711086887858998, -0.8296172670314541,
    -1.0001208768938805, -0.1709776743252596, -0.8296172670314541, 0.049528471065496626};
const std::vector<double> kSvdGrad{1.2643409445628913,  0.06078622381389222, 0.13334495373742347,
                                   0.31641059907584224, 0.7846663107557321,  0.8586948689781418,
                                   0.33702382196825664, -0.7566806628586434, 1.1696439909163654,
                                   1.6513020231179296,  0.15013809431492298, 0.17645835886260958};
const std::vector<double> kQrGrad{-0.0899481841104684,  0.3108361975136643,  -0.5210836001933191,
                                  -0.8957980396365721,  -0.151081995035938,  0.2531481428605405,
                                  -0.27287124723014167, 0.34428233884605014, -0.36350021948125444,
                                  -0.25644336551087604, 0.22170107896938213, -0.49733588570326076};
const std::vector<double> kSolveGradA{
    0.2941514698244547,   0.003523612998976465,   -0.1754118300412569,  -0.28721554032899976,
    0.05174111575204352,  0.06905658517127168,    -0.03048493614128394, -0.36187762483589764,
    0.49657271015398213,  -0.0006379158074182059, -0.2961576230781808,  -0.4548990377448466,
    -0.40520231211533636, 0.054201556163916184,   0.2419541801417443,   0.12697222892214785};
const std::vector<double> kSolveGradB{
    0.02168606834397295,  0.21629740893728877, 0.2560515901672492, 0.08333574048932667,
    0.012334267309858739, 0.36078454028134843, 0.1877870533522054, -0.2588751841474335};
const std::vector<double> kLogabsdetGrad{
    0.5393353360871198,   0.07369508073601201, 0.16522718738265113,  -0.29196395043184387,
    0.16923510211155723,  0.3156864727461799,  -0.02715271960484128, -0.030691238915046656,
    -0.0428955198012652,  0.08853519743493456, 0.35038562639013254,  -0.0028885871920043935,
    -0.21982148531153414, -0.1860250151650828, 0.11207718304977035,  0.6585978797770011};
const std::vector<double> kDetGrad{14.937000000000003,
                                   2.041000000000001,
                                   4.576,
                                   -8.086000000000002,
                                   4.687,
                                   8.743,
                                   -0.7520000000000003,
                                   -0.8500000000000003,
                                   -1.1880000000000002,
                                   2.452,
                                   9.704,
                                   -0.08000000000000008,
                                   -6.088,
                                   -5.152000000000002,
                                   3.1040000000000005,
                                   18.240000000000006};
const std::vector<double> kInvGrad{
    -0.07864155919081248,  -0.12259868630894387,  -0.05340576578708085, 0.1323374887408284,
    -0.13763348424331676,  -0.017984634049082307, -0.00835216830163408, 0.018022761403730075,
    -0.12534654337320886,  -0.16732043789933831,  0.02729947692257596,  0.19129547691977572,
    -0.025114457712152764, 0.07441152653976452,   -0.10943051159322273, -0.028104518638413418};
const std::vector<double> kPinvGrad{
    -0.11810357071909434, 0.1329593680527547,   -0.08151837861274946, -0.20304574837386075,
    -0.11236393227828473, 0.18631642224997744,  -0.08542453139513252, -0.14998474443025472,
    -0.11965496936223084, -0.24704038110718332, 0.05212953724720361,  -0.18365468675853167};

const std::vector<double> kA{2.0,  -1.0, 0.5, 0.3,  0.4, 3.0,  -0.7, 1.1,
                             -1.2, 0.8,  2.5, -0.6, 0.9, -0.3, 0.2,  1.7};
const std::vector<double> kT{1.0, 0.2, -0.4, 0.3, -1.5, 0.8, -0.6, 0.9, 2.0, 1.4, 0.1, -0.3};
const std::vector<double> kB{1.0, -2.0, 0.5, 0.25, -1.5, 3.0, 2.0, 1.0};
const std::vector<double> kW{0.3,  -0.2, 0.5, 0.1,  0.7, 0.4,  -0.6, 0.2,
                             -0.1, 0.9,  0.3, -0.8, 0.6, -0.5, 0.2,  0.4};

// The script's inputs: A general, S = A A^T + 4 I, T tall, B right-hand sides, W weights.
struct Inputs {
  st::Tensor A = st::from_vector(kA, {4, 4}), T = st::from_vector(kT, {4, 3});
  st::Tensor B = st::from_vector(kB, {4, 2}), W = st::from_vector(kW, {4, 4});
  st::Tensor S = st::matmul(A, A.transpose(0, 1)) + st::eye(4, st::f64) * 4.0;
  st::Tensor W3 = W.ix(st::all, st::slice(0, 3));
  st::Tensor Wsq = W.ix(st::slice(0, 3), st::slice(0, 3));
};

void require_values_close(const st::Tensor& got, const std::vector<double>& want,
                          double tol = 1e-10) {
  const std::vector<double> g = got.to_vector<double>();
  REQUIRE(g.size() == want.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    INFO("element " << i);
    CHECK(g[i] == Approx(want[i]).epsilon(tol).margin(tol));
  }
}

}  // namespace

TEST_CASE("linalg gradients match PyTorch float64: factorisations", "[ad][linalg]") {
  const Inputs in;
  const st::Tensor &S = in.S, &T = in.T, &W = in.W, &W3 = in.W3, &Wsq = in.Wsq;
  require_values_close(
      st::grad([&](const auto& s) { return st::sum(st::linalg::cholesky(s) * W); }, S),
      kCholeskyGrad);
  const st::Tensor c = st::from_vector(std::vector<double>{1.0, -2.0, 0.5, 3.0});
  auto eig = [&](const auto& s) {
    const auto [w, v] = st::linalg::eigh(s);
    return st::sum(w * c) + st::sum(v * v * W);
  };
  require_values_close(st::grad(eig, S), kEighGrad);
  const st::Tensor cs = st::from_vector(std::vector<double>{1.0, -0.5, 2.0});
  auto sv = [&](const auto& t) {
    const auto [u, s, vh] = st::linalg::svd(t);
    return st::sum(s * cs) + st::sum(u * u * W3) + st::sum(vh * vh * Wsq);
  };
  require_values_close(st::grad(sv, T), kSvdGrad);
  auto qr = [&](const auto& t) {
    const auto [q, r] = st::linalg::qr(t);
    return st::sum(q * W3) + st::sum(r * Wsq);
  };
  require_values_close(st::grad(qr, T), kQrGrad);
}

TEST_CASE("linalg gradients match PyTorch float64: solves and determinants", "[ad][linalg]") {
  const Inputs in;
  const st::Tensor &A = in.A, &B = in.B, &T = in.T, &W = in.W, &W3 = in.W3;
  auto solve = [&](const auto& a, const auto& b) {
    return st::sum(st::linalg::solve(a, b) * W.ix(st::all, st::slice(0, 2)));
  };
  const auto [ga, gb] = st::grad(solve, A, B);
  require_values_close(ga, kSolveGradA);
  require_values_close(gb, kSolveGradB);
  require_values_close(st::grad([](const auto& a) { return st::linalg::slogdet(a).second; }, A),
                       kLogabsdetGrad);
  require_values_close(st::grad([](const auto& a) { return st::linalg::det(a); }, A), kDetGrad,
                       1e-9);
  CHECK(st::linalg::det(A).item<double>() == Approx(27.695200000000003).epsilon(1e-13));
  require_values_close(st::grad([&](const auto& a) { return st::sum(st::linalg::inv(a) * W); }, A),
                       kInvGrad);
  const st::Tensor W3t = W3.transpose(0, 1);
  require_values_close(
      st::grad([&](const auto& t) { return st::sum(st::linalg::pinv(t) * W3t); }, T), kPinvGrad);
}
