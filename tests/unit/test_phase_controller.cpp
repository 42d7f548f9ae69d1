// The hybrid loop's phase controller (train/phase_controller.hpp): each transition rule, the
// horizon cap after rollbacks and accepts (and its recovery after predict.retry_after real
// steps), the limit on predict blocks in a row, the learning-rate halving window, and that its
// saved state restores every field.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "train/phase_controller.hpp"

namespace {

using hpt::train::HybridSettings;
using hpt::train::Phase;
using hpt::train::PhaseController;

HybridSettings settings() {
  HybridSettings s;
  s.warmup = 7;
  s.full_steps = 4;
  s.correct_steps = 2;
  s.max_horizon = 40;
  s.max_predict_blocks = 2;
  s.lr_halve_steps = 10;
  return s;
}

// Real steps until the controller asks for a decision; returns how many were made.
int real_steps_until_decision(PhaseController& c) {
  int n = 1;
  while (!c.real_step_done()) ++n;
  return n;
}

TEST(PhaseController, WarmupThenDecisionThenFullBlock) {
  PhaseController c(settings());
  EXPECT_EQ(c.phase(), Phase::Warmup);
  EXPECT_EQ(real_steps_until_decision(c), 7);
  c.stay_full();
  EXPECT_EQ(c.phase(), Phase::Full);
  EXPECT_EQ(real_steps_until_decision(c), 4);
}

TEST(PhaseController, NoWarmupStartsInFull) {
  HybridSettings s = settings();
  s.warmup = 0;
  PhaseController c(s);
  EXPECT_EQ(c.phase(), Phase::Full);
  EXPECT_EQ(real_steps_until_decision(c), 4);
}

TEST(PhaseController, PredictBlockCountsLeadsAndEndsAtItsHorizon) {
  PhaseController c(settings());
  real_steps_until_decision(c);
  c.enter_predict(5);
  EXPECT_EQ(c.phase(), Phase::Predict);
  for (int k = 1; k <= 4; ++k) {
    EXPECT_EQ(c.lead(), k - 1);
    EXPECT_FALSE(c.predicted_step_done());
  }
  EXPECT_TRUE(c.predicted_step_done());
  EXPECT_EQ(c.lead(), 5);
  EXPECT_EQ(c.counters().predicted_steps, 5);
  EXPECT_THROW(c.real_step_done(), std::exception);  // no real step inside a predict block
}

TEST(PhaseController, AcceptLeadsToCorrectBlockAndKeepsTheSteps) {
  PhaseController c(settings());
  real_steps_until_decision(c);
  c.enter_predict(10);
  while (!c.predicted_step_done()) {
  }
  c.accepted();
  EXPECT_EQ(c.phase(), Phase::Correct);
  EXPECT_EQ(c.counters().accepted, 1);
  EXPECT_EQ(c.counters().predicted_kept, 10);
  EXPECT_EQ(real_steps_until_decision(c), 2);
}

TEST(PhaseController, RollbackHalvesTheCapAndAcceptDoublesItBackToTheMaximum) {
  PhaseController c(settings());
  real_steps_until_decision(c);
  c.enter_predict(40);
  c.predicted_step_done();
  c.rolled_back();
  EXPECT_EQ(c.phase(), Phase::Full);
  EXPECT_EQ(c.horizon_cap(), 20);
  EXPECT_EQ(c.counters().rolled_back, 1);
  EXPECT_EQ(c.counters().predicted_kept, 0);
  real_steps_until_decision(c);
  EXPECT_THROW(c.enter_predict(30), std::exception);  // above the cap
  c.enter_predict(20);
  c.rolled_back();
  EXPECT_EQ(c.horizon_cap(), 10);
  real_steps_until_decision(c);
  c.enter_predict(10);
  c.accepted();
  EXPECT_EQ(c.horizon_cap(), 20);
  real_steps_until_decision(c);
  c.enter_predict(20);
  c.accepted();
  EXPECT_EQ(c.horizon_cap(), 40);
}

// A rollback at horizon 8 leaves a cap of 4. Without retry_after the cap stays there however long
// the run goes on; with it, every retry_after real steps without a rollback double it (to the
// maximum at most), and a rollback starts the count again.
TEST(PhaseController, CapRecoversAfterRetryAfterRealStepsWithoutARollback) {
  for (const int retry : {0, 12}) {
    HybridSettings s = settings();
    s.retry_after = retry;
    PhaseController c(s);
    real_steps_until_decision(c);
    c.enter_predict(8);
    c.rolled_back();
    ASSERT_EQ(c.horizon_cap(), 4);
    std::vector<int> caps;  // the cap after each real step
    for (int n = 0; n < 60; ++n) {
      if (c.real_step_done()) c.stay_full();
      caps.push_back(c.horizon_cap());
    }
    for (int n = 0; n < 60; ++n) {
      // A plain loop: the cap doubles at steps 12, 24, 36 (4 -> 8 -> 16 -> 32), then is held at 40.
      const int expected = retry == 0 ? 4 : std::min(40, 4 << ((n + 1) / 12));
      EXPECT_EQ(caps[n], expected) << "retry_after " << retry << ", real step " << n + 1;
    }
    if (retry == 0) continue;
    real_steps_until_decision(c);
    c.enter_predict(40);
    c.rolled_back();  // cap 20, count restarted
    for (int n = 0; n < 11; ++n)
      if (c.real_step_done()) c.stay_full();
    EXPECT_EQ(c.horizon_cap(), 20);
    if (c.real_step_done()) c.stay_full();
    EXPECT_EQ(c.horizon_cap(), 40);
  }
}

TEST(PhaseController, RestoresStatesSavedBeforeTheGateAndRetryCounters) {
  PhaseController a(settings());
  real_steps_until_decision(a);
  a.enter_predict(8);
  a.rolled_back();
  std::vector<std::int64_t> old = a.save();
  old.resize(old.size() - 2);  // as checkpoints before the gate counters stored it
  PhaseController b(settings());
  b.restore(old);
  EXPECT_EQ(b.save(), a.save());  // a consulted no gate: its counters are 0, as b's restart
  old.pop_back();                 // before predict.retry_after
  PhaseController c(settings());
  c.restore(old);
  EXPECT_EQ(c.save(), a.save());  // the retry counter restarts at 0, a's just after the rollback
  old.pop_back();
  EXPECT_THROW(c.restore(old), std::exception);
}

TEST(PhaseController, CountsGateDecisionsAndRestoresThem) {
  PhaseController a(settings());
  a.gate_decision(false);
  a.gate_decision(true);
  a.gate_decision(true);
  EXPECT_EQ(a.counters().gate_asked, 3);
  EXPECT_EQ(a.counters().gate_opened, 2);
  PhaseController b(settings());
  b.restore(a.save());
  EXPECT_EQ(b.counters().gate_asked, 3);
  EXPECT_EQ(b.counters().gate_opened, 2);
}

TEST(PhaseController, AtMostMaxPredictBlocksInARowThenFull) {
  PhaseController c(settings());
  real_steps_until_decision(c);
  for (int b = 0; b < 2; ++b) {
    ASSERT_TRUE(c.may_predict());
    c.enter_predict(3);
    c.accepted();
    real_steps_until_decision(c);
  }
  EXPECT_FALSE(c.may_predict());
  EXPECT_THROW(c.enter_predict(3), std::exception);
  c.stay_full();
  EXPECT_TRUE(c.may_predict());  // a Full block resets the count
}

TEST(PhaseController, WarningForcesADoubleFullBlock) {
  PhaseController c(settings());
  real_steps_until_decision(c);
  c.enter_predict(5);
  c.accepted();
  c.warning();
  EXPECT_EQ(c.phase(), Phase::Full);
  EXPECT_EQ(c.counters().warnings, 1);
  EXPECT_EQ(real_steps_until_decision(c), 8);
}

TEST(PhaseController, CriticalHalvesTheLearningRateForItsWindow) {
  PhaseController c(settings());
  EXPECT_EQ(c.lr_factor(50), 1.0);
  c.critical(50);
  EXPECT_EQ(c.phase(), Phase::Full);
  EXPECT_EQ(c.lr_factor(51), 0.5);
  EXPECT_EQ(c.lr_factor(60), 0.5);
  EXPECT_EQ(c.lr_factor(61), 1.0);
  EXPECT_EQ(c.counters().criticals, 1);
}

TEST(PhaseController, SavedStateRestoresMidBlock) {
  PhaseController a(settings());
  real_steps_until_decision(a);
  a.enter_predict(6);
  a.predicted_step_done();
  a.predicted_step_done();
  PhaseController b(settings());
  b.restore(a.save());
  EXPECT_EQ(b.save(), a.save());
  EXPECT_EQ(b.phase(), Phase::Predict);
  EXPECT_EQ(b.lead(), 2);
  int more = 1;
  while (!b.predicted_step_done()) ++more;
  EXPECT_EQ(more, 4);
}

}  // namespace
