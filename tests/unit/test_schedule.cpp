// Learning-rate schedules (train/lr_schedule) at chosen steps against their closed formulas.
#include <gtest/gtest.h>

#include <cmath>

#include "core/config.hpp"
#include "train/lr_schedule.hpp"

namespace {

using hpt::LrSchedule;
using hpt::ScheduleOptions;
using hpt::ScheduleStyle;

constexpr double kPi = 3.141592653589793;

ScheduleOptions options(ScheduleStyle style, double base, long warmup) {
  ScheduleOptions o;
  o.style = style;
  o.base_lr = base;
  o.warmup = warmup;
  return o;
}

TEST(Schedule, Constant) {
  const LrSchedule s(options(ScheduleStyle::Constant, 0.05, 0));
  for (long t : {0L, 1L, 17L, 100000L}) EXPECT_DOUBLE_EQ(s.lr(t), 0.05);
}

TEST(Schedule, ConstantWithWarmup) {
  const LrSchedule s(options(ScheduleStyle::Constant, 0.2, 4));
  EXPECT_DOUBLE_EQ(s.lr(0), 0.2 * 1 / 4);
  EXPECT_DOUBLE_EQ(s.lr(1), 0.2 * 2 / 4);
  EXPECT_DOUBLE_EQ(s.lr(3), 0.2);
  EXPECT_DOUBLE_EQ(s.lr(4), 0.2);
  EXPECT_DOUBLE_EQ(s.lr(1000), 0.2);
}

TEST(Schedule, StepDecay) {
  auto o = options(ScheduleStyle::Step, 0.1, 0);
  o.step_size = 30;
  o.gamma = 0.5;
  const LrSchedule s(o);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.1);
  EXPECT_DOUBLE_EQ(s.lr(29), 0.1);
  EXPECT_DOUBLE_EQ(s.lr(30), 0.05);
  EXPECT_DOUBLE_EQ(s.lr(59), 0.05);
  EXPECT_DOUBLE_EQ(s.lr(60), 0.025);
  EXPECT_DOUBLE_EQ(s.lr(95), 0.1 * std::pow(0.5, 3));
}

TEST(Schedule, StepDecayCountsAfterWarmup) {
  auto o = options(ScheduleStyle::Step, 1.0, 10);
  o.step_size = 5;
  o.gamma = 0.1;
  const LrSchedule s(o);
  EXPECT_DOUBLE_EQ(s.lr(4), 0.5);
  EXPECT_DOUBLE_EQ(s.lr(10), 1.0);
  EXPECT_DOUBLE_EQ(s.lr(14), 1.0);
  EXPECT_NEAR(s.lr(15), 0.1, 1e-15);
  EXPECT_NEAR(s.lr(24), 0.01, 1e-15);
}

TEST(Schedule, CosineWithWarmup) {
  auto o = options(ScheduleStyle::Cosine, 0.3, 10);
  o.min_lr = 0.01;
  o.total_steps = 110;
  const LrSchedule s(o);
  // Warmup: linear to the base lr.
  EXPECT_DOUBLE_EQ(s.lr(0), 0.03);
  EXPECT_DOUBLE_EQ(s.lr(4), 0.15);
  EXPECT_DOUBLE_EQ(s.lr(9), 0.3);
  // Cosine from base (t = 10) to min_lr (t = 110) over 100 steps.
  for (long t : {10L, 25L, 60L, 97L, 110L}) {
    const double p = double(t - 10) / 100.0;
    const double ref = 0.01 + (0.3 - 0.01) * 0.5 * (1 + std::cos(kPi * p));
    EXPECT_NEAR(s.lr(t), ref, 1e-15) << "t = " << t;
  }
  EXPECT_NEAR(s.lr(60), 0.01 + 0.29 * 0.5, 1e-15);  // half way
  EXPECT_DOUBLE_EQ(s.lr(10), 0.3);
  EXPECT_DOUBLE_EQ(s.lr(110), 0.01);
  EXPECT_DOUBLE_EQ(s.lr(5000), 0.01);  // stays at min_lr past the end
}

TEST(Schedule, CosineIsMonotoneAfterWarmup) {
  auto o = options(ScheduleStyle::Cosine, 1.0, 0);
  o.total_steps = 500;
  const LrSchedule s(o);
  for (long t = 1; t <= 500; ++t) EXPECT_LE(s.lr(t), s.lr(t - 1));
  EXPECT_DOUBLE_EQ(s.lr(0), 1.0);
  EXPECT_NEAR(s.lr(500), 0.0, 1e-15);
}

TEST(Schedule, InconsistentOptionsAreInputErrors) {
  auto o = options(ScheduleStyle::Cosine, 0.1, 0);
  o.total_steps = 100;
  o.min_lr = 0.5;
  EXPECT_THROW(LrSchedule{o}, hpt::InputError);
  o.min_lr = 0.0;
  o.total_steps = 0;
  EXPECT_THROW(LrSchedule{o}, hpt::InputError);
  auto st = options(ScheduleStyle::Step, 0.1, 0);
  st.step_size = 0;
  EXPECT_THROW(LrSchedule{st}, hpt::InputError);
}

TEST(Schedule, FromTheDeck) {
  hpt::OptionSchema schema;
  hpt::declare_schedule_options(schema);
  hpt::Config c(schema);
  c.set("schedule.style", "cosine", "test");
  c.set("schedule.warmup", "5", "test");
  c.set("schedule.min_lr", "0.001", "test");
  // total_steps = 0 takes the run's steps.
  const auto s = hpt::make_lr_schedule(c, 0.1, 205);
  EXPECT_EQ(s.options().total_steps, 205);
  EXPECT_DOUBLE_EQ(s.lr(0), 0.02);
  EXPECT_NEAR(s.lr(105), 0.001 + 0.099 * 0.5, 1e-15);
  EXPECT_THROW(c.set("schedule.style", "linear", "test"), hpt::InputError);
  c.set("schedule.style", "step", "test");
  c.set("schedule.step_size", "10", "test");
  c.set("schedule.gamma", "0.5", "test");
  const auto st = hpt::make_lr_schedule(c, 0.1, 205);
  EXPECT_DOUBLE_EQ(st.lr(15), 0.05);
}

}  // namespace
