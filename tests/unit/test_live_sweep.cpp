// The pieces of run.mode = watch: a growing file read in parts (torn last line, replaced file,
// vanished file), the rules a live row is added by (restart cut, divergence, validation points,
// carried learning rate), and the judgment origin against a loop over the steps written here.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "forecast/live_judge.hpp"
#include "io/growing_file.hpp"
#include "io/live_sweep_reader.hpp"

namespace {

using hpt::forecast::Curve;
using hpt::forecast::LiveRun;
using hpt::io::GrowingFile;
using hpt::io::LiveRow;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string temp_path(const char* name) {
  return ::testing::TempDir() + "/" + name;
}

void append(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << text;
}

TEST(GrowingFile, ReturnsCompletedLinesOnlyAndResumes) {
  const std::string path = temp_path("hpt_growing.csv");
  std::remove(path.c_str());
  GrowingFile f(path);
  EXPECT_EQ(f.read().change, GrowingFile::Change::kNone);  // not there yet
  append(path, "step,loss\r\n1,0.5\n2,0.");
  GrowingFile::Update u = f.read();
  ASSERT_EQ(u.lines.size(), 2u);
  EXPECT_EQ(u.lines[0], "step,loss");  // CR removed
  EXPECT_EQ(u.lines[1], "1,0.5");
  EXPECT_TRUE(f.read().lines.empty());  // the torn line waits
  append(path, "4\n3,0.3\n");
  u = f.read();
  ASSERT_EQ(u.lines.size(), 2u);
  EXPECT_EQ(u.lines[0], "2,0.4");
  EXPECT_EQ(u.first_line, 3);
}

TEST(GrowingFile, ReplacedFileIsReadAgainAndVanishedIsGone) {
  const std::string path = temp_path("hpt_growing2.csv");
  std::remove(path.c_str());
  append(path, "a\nb\nc\n");
  GrowingFile f(path);
  EXPECT_EQ(f.read().lines.size(), 3u);
  std::remove(path.c_str());
  append(path, "x\n");  // shorter, another inode: a new file
  GrowingFile::Update u = f.read();
  EXPECT_EQ(u.change, GrowingFile::Change::kRestarted);
  ASSERT_EQ(u.lines.size(), 1u);
  EXPECT_EQ(u.lines[0], "x");
  std::remove(path.c_str());
  EXPECT_EQ(f.read().change, GrowingFile::Change::kGone);
}

LiveRow loss_row(long long step, double loss, double lr = kNaN) {
  LiveRow r;
  r.step = step, r.has_loss = true, r.loss = loss, r.lr = lr, r.val_loss = kNaN;
  return r;
}

// A plan (<run>.lr) rewritten in place at the same size, at once, is read again and reaches its
// run; a poll without any change leaves the run's plan as it was.
TEST(LiveSweepReader, PlanRewrittenAtTheSameSizeIsReadAgain) {
  const std::string dir = ::testing::TempDir() + "/hpt_plan_folder";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  append(dir + "/a.csv", "step,loss\n1,2.0\n2,1.9\n");
  append(dir + "/a.lr", "step,lr\n1,0.1\n2,0.1\n3,0.1\n");
  hpt::io::LiveSweepReader reader(dir);
  reader.poll(0.0);
  ASSERT_EQ(reader.runs().size(), 1u);
  ASSERT_EQ(reader.runs()[0].plan_lr.size(), 3u);
  EXPECT_EQ(reader.runs()[0].plan_lr[2], 0.1);
  {
    std::ofstream out(dir + "/a.lr", std::ios::trunc);
    out << "step,lr\n1,0.1\n2,0.1\n3,0.2\n";
  }
  reader.poll(0.1);
  EXPECT_EQ(reader.runs()[0].plan_lr[2], 0.2);
  reader.poll(0.2);
  EXPECT_EQ(reader.runs()[0].plan_lr[2], 0.2);
  std::filesystem::remove_all(dir);
}

TEST(LiveRows, RestartCutsTheCurveBeforeTheRepeatedStep) {
  LiveRun run;
  run.curve.id = "a";
  std::vector<std::string> notes;
  for (int s = 1; s <= 10; ++s)
    hpt::io::append_live_row(run, loss_row(s, 1.0 / s, 0.1), "x", notes);
  LiveRow val;
  val.step = 8, val.loss = kNaN, val.lr = kNaN, val.val_loss = 0.2;
  EXPECT_TRUE(hpt::io::append_live_row(run, val, "x", notes));
  EXPECT_TRUE(notes.empty());
  EXPECT_TRUE(hpt::io::append_live_row(run, loss_row(7, 9.0), "x", notes));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("restarted"), std::string::npos);
  ASSERT_EQ(run.curve.steps.size(), 7u);  // steps 1..6, then 7 again
  EXPECT_EQ(run.curve.steps.back(), 7);
  EXPECT_EQ(run.curve.loss.back(), 9.0);
  EXPECT_EQ(run.curve.lr.back(), 0.1);       // an empty lr cell carries the previous rate
  EXPECT_TRUE(run.curve.val_steps.empty());  // the validation point at 8 was cut too
}

TEST(LiveRows, NonFiniteLossEndsTheCurveNegativeIsSkipped) {
  LiveRun run;
  std::vector<std::string> notes;
  hpt::io::append_live_row(run, loss_row(1, 1.0), "x", notes);
  EXPECT_FALSE(hpt::io::append_live_row(run, loss_row(2, -1.0), "x", notes));
  EXPECT_FALSE(run.ended);
  EXPECT_FALSE(hpt::io::append_live_row(run, loss_row(3, std::nan("")), "x", notes));
  EXPECT_TRUE(run.ended);
  EXPECT_FALSE(hpt::io::append_live_row(run, loss_row(4, 1.0), "x", notes));
  EXPECT_EQ(run.curve.steps.size(), 1u);
  EXPECT_TRUE(hpt::io::append_live_row(run, loss_row(2, 0.5), "x", notes));  // restarted
  EXPECT_FALSE(run.ended);
}

TEST(LiveJudge, JudgmentOriginMatchesALoop) {
  Curve c;
  for (long long s = 3; s <= 500; s += 3) c.steps.push_back(s), c.loss.push_back(1.0);
  for (long long judge : {5LL, 29LL, 30LL, 100LL, 251LL, 1000LL})
    for (long long every : {1LL, 10LL, 15LL}) {
      long long expected = -1;
      for (std::size_t i = 0; i < c.steps.size(); ++i)
        if (c.steps[i] <= judge && c.steps[i] % every == 0 && i + 1 >= 10) expected = c.steps[i];
      EXPECT_EQ(hpt::forecast::judgment_origin(c, judge, every), expected) << judge << " " << every;
    }
}

TEST(LiveJudge, CurveUptoKeepsThePrefix) {
  Curve c;
  c.steps = {1, 2, 3, 4};
  c.loss = {4, 3, 2, 1};
  c.lr = {1, 1, 0.5, 0.5};
  c.val_steps = {2, 4};
  c.val_loss = {3, 1};
  const Curve p = hpt::forecast::curve_upto(c, 3);
  EXPECT_EQ(p.steps, (std::vector<long long>{1, 2, 3}));
  EXPECT_EQ(p.lr.size(), 3u);
  EXPECT_EQ(p.val_steps, (std::vector<long long>{2}));
}

TEST(LiveJudge, PlanExtendsTheCurveWithItsSchedule) {
  LiveRun run;
  run.curve.steps = {1, 2, 3};
  run.curve.loss = {3, 2, 1};  // no lr column: the prefix's rates come from the plan
  for (long long s = 1; s <= 6; ++s) run.plan_steps.push_back(s), run.plan_lr.push_back(0.1 * s);
  const Curve c = hpt::forecast::with_plan(run.curve, run);
  EXPECT_EQ(c.steps, (std::vector<long long>{1, 2, 3, 4, 5, 6}));
  ASSERT_EQ(c.lr.size(), 6u);
  for (std::size_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(c.lr[i], 0.1 * double(i + 1));
  EXPECT_EQ(c.loss.size(), 6u);
  run.plan_steps.clear(), run.plan_lr.clear();
  EXPECT_EQ(hpt::forecast::with_plan(run.curve, run).steps.size(), 3u);  // no plan: the curve
}

}  // namespace
