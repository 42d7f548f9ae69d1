// The BPTT with each member's step split across teams (kernels/rssm_bptt_split.hpp) against the
// one-team sweep (kernels/rssm_bptt.hpp, itself checked against a host loop and finite differences
// in test_rssm_gradcheck.cpp): the window loss and every gradient tensor, for both GRU
// conventions, shapes whose H is not a multiple of the split's block, and windows shorter than
// their capacity. The two sum dL/dh in another order, so they agree to rounding, not bit for bit.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "kernels/rssm_bptt.hpp"
#include "physics-style-modules/dynamics/rssm_model.hpp"
#include "test_support.hpp"

namespace {

using hpt::BpttRecurrence;
using hpt::GruReset;
using Vec = std::vector<double>;

struct Shape {
  int E, H, S, I, K, steps;
};

// H below, at and above the block of kBpttSplitUnits, not a multiple of it, and one window only
// partly filled.
const Shape kShapes[] = {{2, 5, 3, 4, 4, 4},
                         {3, 13, 4, 6, 5, 3},
                         {2, 16, 2, 3, 3, 3},
                         {2, 37, 5, 4, 6, 6},
                         {1, 70, 3, 5, 4, 1}};

template <class View>
void fill_uniform(const View& v, std::mt19937& gen, double lo, double hi) {
  std::uniform_real_distribution<double> u(lo, hi);
  auto h = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < h.span(); ++i) h.data()[i] = typename View::value_type(u(gen));
  Kokkos::deep_copy(v, h);
}

template <class Real, class Mem>
hpt::RssmWindow<Real, Mem> random_window(const Shape& z, std::mt19937& gen) {
  hpt::RssmWindow<Real, Mem> w(z.E, z.H, z.S, z.I, z.K);
  fill_uniform(w.x, gen, -1.0, 1.0);
  fill_uniform(w.y, gen, -0.5, 0.5);
  fill_uniform(w.h0, gen, -0.8, 0.8);
  fill_uniform(w.weight, gen, 0.0, 1.5);
  fill_uniform(w.eps, gen, -2.0, 2.0);
  w.steps = z.steps;
  return w;
}

struct Result {
  Vec loss, grad;
};

template <class Space, class Real>
Result run_bptt(hpt::RssmModel<Real, typename Space::memory_space>& model, const GruReset reset,
                const hpt::RssmWindow<Real, typename Space::memory_space>& window, const Shape& z,
                const BpttRecurrence recurrence) {
  using Mem = typename Space::memory_space;
  hpt::RssmBpttWorkspace<Real, Mem> ws(z.E, z.H, z.S, z.K);
  hpt::View1<Real, Mem> loss("loss", std::size_t(z.E));
  Kokkos::deep_copy(model.store.gradients(), Real(123));  // overwritten, not added to
  hpt::rssm_bptt_forward(Space(), model.params, reset, window, 0.3, ws, loss, recurrence);
  hpt::rssm_bptt_backward(Space(), model.params, model.grads, reset, window, 0.3, ws, recurrence);
  return {hpt::test::download_values(loss), hpt::test::download_values(model.store.gradients())};
}

template <class C>
class RssmBpttSplit : public ::testing::Test {};
TYPED_TEST_SUITE(RssmBpttSplit, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(RssmBpttSplit, LossAndEveryGradientEqualTheOneTeamSweep) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  for (const Shape& z : kShapes) {
    std::mt19937 gen(unsigned(17 * z.H + z.E));
    hpt::RssmModel<Real, Mem> model(z.E, z.H, z.S, z.I);
    fill_uniform(model.store.values(), gen, -0.5, 0.5);
    const auto window = random_window<Real, Mem>(z, gen);
    // A sum of about H + 3H products per element and K samples through time.
    const double tol = hpt::test::tolerance<Real>(1e2 * (4.0 * z.H + z.I) * z.K);
    for (const GruReset reset : {GruReset::After, GruReset::Before}) {
      const std::string where = std::string(reset == GruReset::After ? "after" : "before") + " E" +
                                std::to_string(z.E) + " H" + std::to_string(z.H) + " steps " +
                                std::to_string(z.steps) + "/" + std::to_string(z.K);
      const Result team = run_bptt<Space, Real>(model, reset, window, z, BpttRecurrence::Team);
      const Result split = run_bptt<Space, Real>(model, reset, window, z, BpttRecurrence::Split);
      for (int m = 0; m < z.E; ++m)
        EXPECT_TRUE(hpt::test::near_rel(split.loss[std::size_t(m)], team.loss[std::size_t(m)], tol))
            << where << " loss of member " << m;
      for (const auto& t : model.store.tensors()) {
        int bad = 0;
        for (std::size_t i = t.offset; i < t.offset + t.size; ++i)
          if (!hpt::test::near_rel(split.grad[i], team.grad[i], tol) && ++bad <= 3)
            ADD_FAILURE() << where << " " << t.name << " element " << i - t.offset << ": "
                          << hpt::test::near_rel(split.grad[i], team.grad[i], tol).message();
        EXPECT_EQ(bad, 0) << where << " " << t.name;
      }
    }
  }
}

// The rule: never split on the host backends, where one team per member fills the few threads.
TEST(RssmBpttSplitRule, HostBackendsKeepOneTeamPerMemberUnlessAsked) {
  using Host = Kokkos::DefaultHostExecutionSpace;
  EXPECT_FALSE(hpt::bptt_uses_split<Host>(BpttRecurrence::Auto, 1024));
  EXPECT_TRUE(hpt::bptt_uses_split<Host>(BpttRecurrence::Split, 8));
  EXPECT_FALSE(hpt::bptt_uses_split<Host>(BpttRecurrence::Team, 1024));
}

}  // namespace
