// Online fine-tuning of the learned level forecaster: a very strong pull gives the pretrained
// weights, no pull gives the fit from scratch, the solution satisfies the optimality condition of
// its objective (checked by a host loop), and a refit at step g uses nothing after g.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "forecast/baselines.hpp"
#include "forecast/level_finetune.hpp"
#include "test_level_support.hpp"

namespace {

using hpt::forecast::Curve;
using hpt::forecast::kLevelFeatures;
using hpt::forecast::LevelModel;
using hpt::forecast::LevelSample;

std::vector<LevelSample> noisy_samples(int count, unsigned seed) {
  return hpt::test::linear_level_samples(count, seed, 0.2, 0.4, -0.3, 0.5);
}

std::vector<double> random_weights(unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 0.3);
  std::vector<double> w(static_cast<std::size_t>(kLevelFeatures));
  for (double& v : w) v = normal(rng);
  return w;
}

LevelModel random_model() {
  LevelModel m;
  m.median = random_weights(1);
  m.q05 = random_weights(2);
  m.q95 = random_weights(3);
  return m;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a[i] - b[i]));
  return m;
}

// Three runs of one group, 600 steps, noisy power laws with a learning-rate drop.
std::vector<Curve> sweep() {
  std::vector<Curve> runs(3);
  std::mt19937_64 rng(7);
  std::normal_distribution<double> normal(0.0, 0.03);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    runs[r].id = "r" + std::to_string(r);
    for (int s = 1; s <= 600; ++s) {
      runs[r].steps.push_back(s);
      runs[r].loss.push_back((1.0 + 0.3 * double(r)) / std::pow(s, 0.3) * std::exp(normal(rng)));
      runs[r].lr.push_back(s < 400 ? 0.1 : 0.01);
    }
  }
  return runs;
}

}  // namespace

TEST(LevelFinetune, VeryStrongPullGivesThePretrainedWeights) {
  const LevelModel pre = random_model();
  const LevelModel m = hpt::forecast::finetune_level_model(pre, noisy_samples(500, 4), 1e9, 50);
  EXPECT_LT(max_difference(m.median, pre.median), 1e-6);
  EXPECT_LT(max_difference(m.q05, pre.q05), 1e-6);
  EXPECT_LT(max_difference(m.q95, pre.q95), 1e-6);
}

TEST(LevelFinetune, NoPullIsTheFitFromScratch) {
  const std::vector<LevelSample> samples = noisy_samples(400, 5);
  const LevelModel m = hpt::forecast::finetune_level_model(random_model(), samples, 0.0, 5000);
  const LevelModel scratch = hpt::forecast::fit_level_model(samples, 0.0, 5000);
  EXPECT_LT(max_difference(m.median, scratch.median), 1e-6);
  EXPECT_LT(max_difference(m.q05, scratch.q05), 1e-6);
  EXPECT_LT(max_difference(m.q95, scratch.q95), 1e-6);
  EXPECT_GT(max_difference(m.median, random_model().median), 0.1);  // the prior was forgotten
}

// The gradient of sum_i rho(y_i - z_i . v) + ridge / 2 |v - c|^2 (rho: the pinball loss made
// quadratic within kPinballKink of zero), written out on the host, vanishes at the fine-tuned
// weights; nudging any weight raises the objective.
TEST(LevelFinetune, SolutionSatisfiesItsOptimalityCondition) {
  const std::vector<LevelSample> samples = noisy_samples(300, 6);
  const LevelModel pre = random_model();
  const double strength = 0.02, ridge = strength * double(samples.size()), tau = 0.95;
  const LevelModel m = hpt::forecast::finetune_level_model(pre, samples, strength, 5000);
  const std::size_t N = samples.size(), F = std::size_t(kLevelFeatures);
  std::vector<double> scale(F, 0.0), mean(F, 0.0);
  for (const LevelSample& s : samples)
    for (std::size_t j = 0; j < F; ++j) mean[j] += s.f.x[j];
  for (double& m : mean) m /= double(N);
  for (const LevelSample& s : samples)
    for (std::size_t j = 0; j < F; ++j) scale[j] += std::pow(s.f.x[j] - mean[j], 2);
  for (double& v : scale) v = v > 0 ? std::sqrt(v / double(N)) : 1.0;
  const double kink = hpt::forecast::kPinballKink;
  auto rho = [&](double r) {
    const double t = r >= 0 ? tau : 1 - tau, a = std::fabs(r);
    return a < kink ? t * a * a / (2 * kink) : t * (a - kink / 2);
  };
  auto objective = [&](const std::vector<double>& v, std::vector<double>* grad) {
    double f = 0;
    if (grad) grad->assign(F, 0.0);
    for (const LevelSample& s : samples) {
      double p = 0;
      for (std::size_t j = 0; j < F; ++j) p += v[j] * s.f.x[j] / scale[j];
      const double r = s.change - p, t = r >= 0 ? tau : 1 - tau;
      const double psi = t * r / std::max(std::fabs(r), kink);
      f += rho(r);
      if (grad)
        for (std::size_t j = 0; j < F; ++j) (*grad)[j] -= psi * s.f.x[j] / scale[j];
    }
    for (std::size_t j = 0; j < F; ++j) {
      const double d = v[j] - pre.q95[j] * scale[j];
      f += ridge / 2 * d * d;
      if (grad) (*grad)[j] += ridge * d;
    }
    return f;
  };
  std::vector<double> v(F), grad;
  for (std::size_t j = 0; j < F; ++j) v[j] = m.q95[j] * scale[j];
  const double at = objective(v, &grad);
  for (std::size_t j = 0; j < F; ++j) EXPECT_NEAR(grad[j], 0.0, 1e-6) << "feature " << j;
  for (std::size_t j = 0; j < F; ++j)
    for (double step : {-1e-3, 1e-3}) {
      std::vector<double> w = v;
      w[j] += step;
      EXPECT_GT(objective(w, nullptr), at) << "feature " << j;
    }
}

// Every realised sample's target window ends by the refit's step, and the models at step g are
// the same whatever the curves hold after g.
TEST(LevelFinetune, RefitsUseNothingAfterTheirStep) {
  const std::vector<Curve> runs = sweep();
  std::vector<Curve> altered = runs;
  const long long cut = 350;
  for (Curve& c : altered)
    for (std::size_t i = 0; i < c.steps.size(); ++i)
      if (c.steps[i] > cut) c.loss[i] *= 3.0 + std::sin(double(i));
  hpt::forecast::FinetuneSettings s;
  s.on = true;
  s.every = 50;
  s.min_samples = 20;
  s.max_samples = 150;
  LevelModel pre = random_model();
  pre.horizons = {10, 25, 50, 100};
  for (const auto& o : hpt::forecast::realised_origins(runs, {0, 1, 2}, pre.horizons, cut, s))
    EXPECT_LE(
        runs[std::size_t(o.run)].steps[std::size_t(o.n - 1)] + o.h + hpt::forecast::kTargetAfter,
        cut);
  const std::vector<int> group{0, 0, 0};
  hpt::forecast::LevelFinetuner a(pre, s, runs, group), b(pre, s, altered, group);
  for (long long g = 1; g <= 600; ++g) {
    a.advance(g);
    b.advance(g);
    if (g <= cut) {
      ASSERT_EQ(a.model(0).median, b.model(0).median) << "step " << g;
      ASSERT_EQ(a.model(0).q05, b.model(0).q05) << "step " << g;
      ASSERT_EQ(a.model(0).q95, b.model(0).q95) << "step " << g;
    }
  }
  EXPECT_GT(a.refits(), 5);
  EXPECT_GT(max_difference(a.model(0).median, pre.median), 1e-3);         // refits moved the model
  EXPECT_GT(max_difference(a.model(0).median, b.model(0).median), 1e-6);  // later data counts
}
