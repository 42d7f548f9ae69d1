#pragma once
// Shared helper of the learned level forecaster's tests: samples whose quantiles are known.
#include <random>
#include <vector>

#include "forecast/level_model.hpp"

namespace hpt::test {

// change = b0 + b1 x1 + b2 x2 + e, e uniform on [-half, half]: quantile q of the change given x is
// b0 + (2q - 1) half + b1 x1 + b2 x2. x0 = 1; the other features are standard normal noise.
inline std::vector<forecast::LevelSample> linear_level_samples(int count, unsigned seed, double b0,
                                                               double b1, double b2, double half) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> noise(-half, half);
  std::vector<forecast::LevelSample> out(static_cast<std::size_t>(count));
  for (forecast::LevelSample& s : out) {
    s.f.x[0] = 1.0;
    for (int j = 1; j < forecast::kLevelFeatures; ++j) s.f.x[std::size_t(j)] = normal(rng);
    s.change = b0 + b1 * s.f.x[1] + b2 * s.f.x[2] + noise(rng);
  }
  return out;
}

}  // namespace hpt::test
