// The `rssm` dynamics style: deck options and registry, seeded initialisation (limits of
// docs/method.md#rssm-ensemble / PyTorch's GRUCell, identical on Serial and OpenMP), parameter
// visiting, and its rollout wrapper.
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "core/rng.hpp"
#include "kernels/rssm_params.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"
#include "test_support.hpp"

namespace {

std::vector<double> download(const hpt::ParameterSpan& v) {
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(mirror.data(), mirror.data() + mirror.span());
}

TEST(RssmDynamics, BuiltFromDeckDefaultsThroughTheRegistry) {
  hpt::OptionSchema schema;
  hpt::declare_dynamics_options(schema);
  hpt::Config config(schema);
  hpt::Registry<hpt::Dynamics> registry("dynamics");
  hpt::register_dynamics_styles(registry);
  const auto dyn = registry.create(config.get_string("dynamics.style"), config);
  EXPECT_EQ(dyn->style(), "rssm");
  EXPECT_EQ(dyn->members(), 5);
  EXPECT_EQ(dyn->hidden(), 256);
  EXPECT_EQ(dyn->stochastic(), 32);
  EXPECT_EQ(dyn->input(), hpt::kFeatures);
  EXPECT_EQ(dyn->gru_reset(), hpt::GruReset::After);
  config.set("gru.reset", "before", "test");
  config.set("dynamics.members", "2", "test");
  const auto before = registry.create("rssm", config);
  EXPECT_EQ(before->gru_reset(), hpt::GruReset::Before);
  EXPECT_EQ(before->members(), 2);
  EXPECT_THROW(config.set("dynamics.members", "0", "test"), hpt::InputError);
  EXPECT_THROW(registry.create("lstm", config), hpt::InputError);
}

// Every tensor is visited once with its shape; values follow the documented initialisation, drawn
// from rng::uniform(rng::key(seed, tensor index, element)) (mapping written out here).
TEST(RssmDynamics, InitialisationAndParameterVisit) {
  const int E = 3, H = 10, S = 4, I = 7;
  hpt::RssmDynamics dyn(E, H, S, I, hpt::GruReset::After);
  dyn.initialize(42);
  const std::vector<std::pair<std::string, std::vector<std::size_t>>> expected = {
      {"gru.w_ih", {3, 30, 7}},      {"gru.w_hh", {3, 30, 10}},    {"gru.b_ih", {3, 30}},
      {"gru.b_hh", {3, 30}},         {"prior.mean_w", {3, 4, 10}}, {"prior.mean_b", {3, 4}},
      {"prior.scale_w", {3, 4, 10}}, {"prior.scale_b", {3, 4}},    {"loss_head.w", {3, 2, 14}},
      {"loss_head.b", {3, 2}}};
  std::size_t visited = 0;
  dyn.for_each_parameter([&](const std::string& name, const hpt::ParameterSpan& data,
                             const std::vector<std::size_t>& shape) {
    ASSERT_LT(visited, expected.size());
    EXPECT_EQ(name, expected[visited].first);
    EXPECT_EQ(shape, expected[visited].second);
    std::size_t count = 1;
    for (const auto e : shape) count *= e;
    ASSERT_EQ(data.extent(0), count);
    double limit = 0;
    if (name.rfind("gru.", 0) == 0) limit = 1.0 / std::sqrt(double(H));
    if (name == "prior.mean_w" || name == "prior.scale_w") limit = std::sqrt(6.0 / (H + S));
    if (name == "loss_head.w") limit = 0.01 * std::sqrt(6.0 / (H + S + 2));
    const auto values = download(data);
    double max_abs = 0;
    for (std::size_t i = 0; i < count; ++i) {
      const double u = hpt::rng::uniform(hpt::rng::key(42, visited, 0, i));
      // The log-variance bias (second head output) starts at log(1e-4): sigma_delta = 0.01.
      const double expect =
          name == "loss_head.b" && i % 2 == 1 ? std::log(1e-4) : -limit + 2.0 * limit * u;
      EXPECT_TRUE(hpt::test::near_rel(values[i], expect, hpt::test::tolerance<hpt::real>()))
          << name << " " << i;
      max_abs = std::fmax(max_abs, std::fabs(values[i]));
    }
    if (limit > 0) {
      EXPECT_GT(max_abs, 0.5 * limit) << name;  // really spread over the range
    } else if (name != "loss_head.b") {
      EXPECT_EQ(max_abs, 0.0) << name;  // prior biases start at zero
    }
    ++visited;
  });
  EXPECT_EQ(visited, expected.size());
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dyn.latents());
  for (std::size_t i = 0; i < h.span(); ++i) EXPECT_EQ(h.data()[i], hpt::real(0));
}

#if defined(KOKKOS_ENABLE_OPENMP) && defined(KOKKOS_ENABLE_SERIAL)
TEST(RssmDynamics, InitialisationIdenticalOnSerialAndOpenMP) {
  hpt::RssmParams<double, Kokkos::HostSpace> a(2, 33, 5, 9), b(2, 33, 5, 9);
  hpt::initialize_rssm_params(Kokkos::Serial(), a, 7);
  hpt::initialize_rssm_params(Kokkos::OpenMP(), b, 7);
  Kokkos::fence();
  std::vector<const double*> pa, pb;
  std::vector<std::size_t> counts;
  a.for_each_tensor([&](const std::string&, double* d, const std::vector<std::size_t>& s) {
    std::size_t c = 1;
    for (const auto e : s) c *= e;
    pa.push_back(d);
    counts.push_back(c);
  });
  b.for_each_tensor(
      [&](const std::string&, double* d, const std::vector<std::size_t>&) { pb.push_back(d); });
  ASSERT_EQ(pa.size(), 10u);
  for (std::size_t t = 0; t < pa.size(); ++t)
    for (std::size_t i = 0; i < counts[t]; ++i) ASSERT_EQ(pa[t][i], pb[t][i]) << t << " " << i;
}
#endif

// The wrapper starts from the latents it owns: zero latents after initialize, and a rollout with
// the default feature update gives finite paths of the requested shape.
TEST(RssmDynamics, RolloutWrapperRunsFromItsLatents) {
  const int E = 2, H = 16, S = 4, N = 3, Y = 6;
  hpt::RssmDynamics dyn(E, H, S, hpt::kFeatures, hpt::GruReset::Before);
  dyn.initialize(5);
  hpt::RolloutInputs<hpt::real> in;
  in.x0 = hpt::View1<hpt::real>("x0", hpt::kFeatures);
  in.norm_mean = hpt::View1<hpt::real>("mean", hpt::kFeatures);
  in.norm_inv_std = hpt::View1<hpt::real>("inv_std", hpt::kFeatures);
  Kokkos::deep_copy(in.x0, hpt::real(0.3));
  Kokkos::deep_copy(in.norm_inv_std, hpt::real(1));
  in.loss_states = hpt::View1<hpt::LossState<hpt::real>>("states", 1);
  auto states = Kokkos::create_mirror_view(in.loss_states);
  hpt::LossState<hpt::real> st{};
  st.log_loss = st.ema4 = st.ema16 = st.ema64 = st.best = st.mean32 = hpt::real(-0.5);
  st.first = hpt::real(0.2);
  st.std32 = hpt::real(0.1);
  st.count = 1;
  st.window[hpt::kLossWindow - 1] = st.log_loss;
  states(0) = st;
  Kokkos::deep_copy(in.loss_states, states);
  hpt::RolloutSettings settings;
  settings.horizon = Y;
  settings.scenarios = N;
  hpt::RolloutOutputs<hpt::real> out(N, E, H, Y);
  dyn.rollout(in, settings, out);
  Kokkos::fence();
  auto paths = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.loss_paths);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < E; ++m) {
      EXPECT_NEAR(paths(n, m, 0), std::exp(-0.5), 1e-6);
      for (int k = 0; k <= Y; ++k) EXPECT_TRUE(std::isfinite(paths(n, m, k)) && paths(n, m, k) > 0);
    }
}

}  // namespace
