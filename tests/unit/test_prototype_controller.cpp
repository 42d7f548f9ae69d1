// The prototype's phase controller (train/prototype_controller.hpp): its schedule with the
// defaults (warmup, the mandatory Full block, predict lengths from the confidence, Correct blocks,
// five predict blocks in a row at most), the predict-length formula, a warning, and saved state.
#include <gtest/gtest.h>

#include <cmath>

#include "train/prototype_controller.hpp"

namespace {

using hpt::train::Phase;
using hpt::train::PrototypeController;
using hpt::train::PrototypeDecision;
using hpt::train::PrototypeSchedule;

// The formula written out: clamp(floor(floor(15 c^2) (1 - min(0.1 k, 0.5))), 10, 15).
int expected_length(double c, int k) {
  const int n = int(std::floor(std::floor(15.0 * c * c) * (1.0 - std::fmin(0.1 * k, 0.5))));
  return n < 10 ? 10 : (n > 15 ? 15 : n);
}

TEST(PrototypeController, DefaultScheduleWithAConfidentPredictor) {
  PrototypeController c{PrototypeSchedule{}};
  std::int64_t done = 0;
  auto take = [&](double confidence) {
    const PrototypeDecision d = c.next(done, confidence);
    done += d.steps;
    return d;
  };
  PrototypeDecision d = take(1.0);
  EXPECT_EQ(d.phase, Phase::Warmup);
  EXPECT_EQ(d.steps, 100);
  d = take(1.0);  // mandatory Full block, whatever the confidence
  EXPECT_EQ(d.phase, Phase::Full);
  EXPECT_EQ(d.steps, 20);
  for (int cycle = 0; cycle < 2; ++cycle) {
    for (int k = 1; k <= 5; ++k) {
      d = take(1.0);
      EXPECT_EQ(d.phase, Phase::Predict);
      EXPECT_EQ(d.steps, expected_length(1.0, k));
      EXPECT_EQ(c.predict_blocks_in_a_row(), k);
      d = take(1.0);
      EXPECT_EQ(d.phase, Phase::Correct);
      EXPECT_EQ(d.steps, 5);
    }
    d = take(1.0);  // five in a row: a Full block resets the count
    EXPECT_EQ(d.phase, Phase::Full);
    EXPECT_EQ(d.steps, 20);
    EXPECT_EQ(c.predict_blocks_in_a_row(), 0);
  }
  // With c = 1: 13, 12, 10 (floor 10.5), 10 (floor 9 -> 10), 10 steps.
  EXPECT_EQ(expected_length(1.0, 1), 13);
  EXPECT_EQ(expected_length(1.0, 2), 12);
}

TEST(PrototypeController, LowConfidenceStaysInFullBlocks) {
  PrototypeController c{PrototypeSchedule{}};
  std::int64_t done = 0;
  for (int i = 0; i < 6; ++i) {
    const PrototypeDecision d = c.next(done, 0.84);
    EXPECT_EQ(d.phase, i == 0 ? Phase::Warmup : Phase::Full);
    done += d.steps;
  }
  EXPECT_EQ(c.next(done, 0.85).phase, Phase::Predict);  // the threshold itself opens a block
}

TEST(PrototypeController, WarmupResumesFromStepsDone) {
  PrototypeController c{PrototypeSchedule{}};
  const PrototypeDecision d = c.next(37, 1.0);
  EXPECT_EQ(d.phase, Phase::Warmup);
  EXPECT_EQ(d.steps, 63);
}

TEST(PrototypeController, PredictLengthFormula) {
  PrototypeSchedule s;
  for (double conf : {0.85, 0.9, 0.95, 1.0}) {
    PrototypeController c(s);
    std::int64_t done = 0;
    for (int i = 0; i < 2; ++i) done += c.next(done, conf).steps;  // warmup, mandatory Full
    const PrototypeDecision d = c.next(done, conf);
    EXPECT_EQ(d.steps, expected_length(conf, 1)) << conf;
  }
  s.max_predict = 8;  // below the floor of 10: the maximum wins
  PrototypeController small(s);
  std::int64_t done = 0;
  for (int i = 0; i < 2; ++i) done += small.next(done, 1.0).steps;
  EXPECT_EQ(small.next(done, 1.0).steps, 8);
}

TEST(PrototypeController, WarningEndsThePredictRun) {
  PrototypeController c{PrototypeSchedule{}};
  std::int64_t done = 0;
  for (int i = 0; i < 3; ++i) done += c.next(done, 1.0).steps;  // warmup, Full, Predict
  EXPECT_EQ(c.phase(), Phase::Predict);
  c.warning();
  EXPECT_EQ(c.next(done, 1.0).phase, Phase::Full);  // not Correct, not Predict
  EXPECT_EQ(c.next(done, 1.0).phase, Phase::Predict);
}

TEST(PrototypeController, SavedStateRestoresTheSchedule) {
  PrototypeController a{PrototypeSchedule{}};
  std::int64_t done = 0;
  for (int i = 0; i < 4; ++i) done += a.next(done, 0.95).steps;
  PrototypeController b{PrototypeSchedule{}};
  b.restore(a.save());
  for (int i = 0; i < 8; ++i) {
    const PrototypeDecision x = a.next(done, 0.95), y = b.next(done, 0.95);
    EXPECT_EQ(x.phase, y.phase);
    EXPECT_EQ(x.steps, y.steps);
    done += x.steps;
  }
}

}  // namespace
