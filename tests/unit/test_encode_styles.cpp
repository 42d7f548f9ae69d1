// The encoder styles (physics-style-modules/encoder): deck options, the registry, and each style on
// the app's backend and precision — `prototype` on a hand-computed history, `rich` against its own
// exposed raw features and normaliser statistics, frozen during Predict, batched runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "kernels/rich_features.hpp"
#include "physics-style-modules/encoder/register.hpp"
#include "physics-style-modules/encoder/rich.hpp"
#include "test_encode_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::real;
namespace tm = hpt::telemetry;

struct Styles {
  hpt::OptionSchema schema;
  hpt::Registry<hpt::Encoder> registry{"encoder"};
  Styles() {
    hpt::declare_encoder_options(schema);
    hpt::register_encoder_styles(registry);
  }
};

void push(const hpt::Encoder::History& history,
          const std::vector<std::vector<hpt::TelemetryRecord>>& steps,
          std::vector<hpt::test::HostRun>& host) {
  hpt::test::push_steps<hpt::ExecSpace, real>(history, steps, host);
}

TEST(EncodeStyles, OptionsHaveDefaultsAndRanges) {
  Styles s;
  hpt::Config config(s.schema);
  EXPECT_EQ(config.get_string("encoder.style"), "rich");
  EXPECT_EQ(config.get_int("encoder.loss_history"), 256);
  EXPECT_EQ(config.get_int("encoder.grad_history"), 64);
  EXPECT_EQ(config.get_real("encoder.clamp"), 10.0);
  EXPECT_THROW(config.set("encoder.style", "fancy", "test"), hpt::InputError);
  EXPECT_THROW(config.set("encoder.loss_history", "0", "test"), hpt::InputError);
  EXPECT_THROW(config.set("encoder.grad_history", "100000", "test"), hpt::InputError);
  EXPECT_THROW(config.set("encoder.clamp", "0", "test"), hpt::InputError);
  config.set("encoder.loss_history", "48", "test");
  EXPECT_EQ(config.get_int("encoder.loss_history"), 48);
}

TEST(EncodeStyles, RegistryBuildsBothStylesAndRejectsUnknownNames) {
  Styles s;
  hpt::Config config(s.schema);
  config.set("encoder.loss_history", "40", "test");
  config.set("encoder.grad_history", "12", "test");
  auto prototype = s.registry.create("prototype", config);
  auto rich = s.registry.create("rich", config);
  EXPECT_EQ(prototype->style(), "prototype");
  EXPECT_EQ(rich->style(), "rich");
  EXPECT_EQ(prototype->feature_update(), hpt::FeatureUpdate::LossOnly);
  EXPECT_EQ(rich->feature_update(), hpt::FeatureUpdate::Rich);
  EXPECT_EQ(prototype->normalizer(), nullptr);
  EXPECT_NE(rich->normalizer(), nullptr);
  const auto history = rich->create_history(3);
  EXPECT_EQ(history.runs(), 3);
  EXPECT_EQ(history.loss_capacity(), 40);
  EXPECT_EQ(history.other_capacity(), 12);
  EXPECT_GT(rich->bytes_per_encode(1000), prototype->bytes_per_encode(1000));
  try {
    s.registry.create("fancy", config);
    FAIL() << "an unknown style must throw";
  } catch (const hpt::InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("fancy"), std::string::npos) << what;
    EXPECT_NE(what.find("prototype, rich"), std::string::npos) << what;
  }
}

TEST(EncodeStyles, PrototypeOnAHandComputedHistory) {
  Styles s;
  hpt::Config config(s.schema);
  config.set("encoder.style", "prototype", "test");
  auto encoder = s.registry.create(config.get_string("encoder.style"), config);
  // Losses 1, 2, ..., 40 and gradient norms 2, 4, ..., 80 (64-capacity ring holds all).
  std::vector<std::vector<hpt::TelemetryRecord>> steps(40, std::vector<hpt::TelemetryRecord>(1));
  for (int k = 0; k < 40; ++k) {
    auto& t = steps[k][0];
    t.step = k + 1;
    t.phase = tm::kFull;
    t.steps_in_phase = 50;
    t.has_loss = t.has_grad = true;
    t.loss = k + 1;
    t.grad_norm = 2.0 * (k + 1);
    t.effective_lr = 1e-3;
  }
  const auto history = encoder->create_history(1);
  std::vector<hpt::test::HostRun> host(1);
  push(history, steps, host);
  hpt::View2<real> features("features", 1, hpt::kFeatures);
  encoder->encode(history, features);
  auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
  const double tol = hpt::test::tolerance<real>(40);
  const double std40 = std::sqrt((40.0 * 40.0 - 1.0) / 12.0);  // population std of 1..40
  const double expected[26] = {40,          20.5,
                               std40,       1,
                               40,
                               16,  // mean(25..40) - mean(9..24)
                               32.5 / 16.5, 40.0 / 10000.0,
                               80,          41,
                               2 * std40,   2,
                               80,          std::log10(80.0),
                               80.0 / 41.0, 2 * std40 / 41.0,
                               0,           0,
                               0,           0,
                               -3,          0,
                               0,           0,
                               1,           0.5};
  for (int f = 0; f < 26; ++f)
    EXPECT_TRUE(hpt::test::near_rel(x(0, f), expected[f], tol)) << "feature " << f;
  for (int f = 26; f < hpt::kFeatures; ++f) EXPECT_EQ(x(0, f), real(0)) << f;
}

TEST(EncodeStyles, RichNormalisesWithItsExposedStatisticsAndFreezesInPredict) {
  Styles s;
  hpt::Config config(s.schema);
  config.set("encoder.clamp", "2.5", "test");
  auto encoder = s.registry.create("rich", config);
  auto* rich = dynamic_cast<hpt::RichEncoder*>(encoder.get());
  ASSERT_NE(rich, nullptr);
  std::mt19937 rng(51);
  const int runs = 5;
  const auto history = encoder->create_history(runs);
  std::vector<hpt::test::HostRun> host(runs);
  hpt::View2<real> features("features", runs, hpt::kFeatures);
  hpt::View1<hpt::TelemetryRecord> records("records", runs);
  std::vector<double> count_before(runs, 0.0);
  for (int t = 0; t < 40; ++t) {
    std::vector<std::vector<hpt::TelemetryRecord>> step(1, std::vector<hpt::TelemetryRecord>(runs));
    for (int r = 0; r < runs; ++r) step[0][r] = hpt::test::random_record(rng, r, t);
    push(history, step, host);
    encoder->encode(history, features);
    auto x = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), features);
    auto raw = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rich->raw_features());
    auto count =
        Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encoder->normalizer()->count);
    for (int r = 0; r < runs; ++r) {
      auto center =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encoder->normalizer_mean(r));
      auto inv =
          Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encoder->normalizer_inv_std(r));
      // Statistics advance by one sample unless the run is in Predict.
      const bool frozen = step[0][r].phase == tm::kPredict;
      EXPECT_EQ(count(r, 0), count_before[r] + (frozen ? 0.0 : 1.0))
          << "step " << t << " run " << r;
      count_before[r] = count(r, 0);
      for (int f = 0; f < hpt::kFeatures; ++f) {
        const double want = std::fmin(
            2.5, std::fmax(-2.5, (double(raw(r, f)) - double(center(f))) * double(inv(f))));
        ASSERT_TRUE(std::isfinite(x(r, f)));
        EXPECT_LE(std::fabs(x(r, f)), real(2.5));
        EXPECT_TRUE(hpt::test::near_rel(x(r, f), want, 1e3 * hpt::test::tolerance<real>()))
            << "step " << t << " run " << r << " feature " << f;
      }
    }
  }
  // Over 40 random steps most features vary (the digits reference run must have at least 48,
  // test_features_vary.py).
  auto m2 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), encoder->normalizer()->m2);
  int varying = 0;
  for (int f = 0; f < hpt::kFeatures; ++f) varying += m2(0, f) > 0.0;
  EXPECT_GE(varying, 48);
  // A different number of runs re-allocates the statistics instead of failing.
  const auto two = encoder->create_history(2);
  hpt::View2<real> features2("features2", 2, hpt::kFeatures);
  encoder->encode(two, features2);
  EXPECT_EQ(encoder->normalizer()->runs(), 2);
}

}  // namespace
