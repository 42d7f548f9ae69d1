#pragma once
// The stop rule of a live sweep (run.mode = watch; docs/watch.md#decisions). Every run is judged
// at its judgment origin: its newest origin (a step divisible by forecast.every, with at least 10
// entries) at or before forecast.stop_at of the planned last step; a run kept there is judged again
// at each fraction of watch.rejudge_at. There, exactly as
// run.mode = forecast judges a finished sweep, the learned forecaster forecasts its log loss at the
// planned last step from the curve up to that origin, and the run is stopped when the probability
// that it ends below the best other run of its group (the lowest forecast final median, or current
// level, of the others at the same origin) is below 1 - forecast.stop_confidence. Between
// judgments every run's forecast is refreshed from its newest row for the status file.
#include <limits>
#include <map>
#include <unordered_map>
#include <utility>
#include <string>
#include <vector>

#include "forecast/stop_rule.hpp"
#include "forecast/level_model.hpp"
#include "forecast/live_run.hpp"

namespace hpt::forecast {

struct LiveJudgeSettings {
  long long final_step = 0;  // watch.final_step: the runs' planned last step (0: from the files)
  long long every = 10;      // forecast.every
  double stop_at = 0.25;     // forecast.stop_at
  // The fractions of the planned last step at which runs are judged: forecast.stop_at, then
  // watch.rejudge_at (increasing). A run kept at one is judged again at the next.
  std::vector<double> rungs{0.25};
  double stop_confidence = 0.9;                       // forecast.stop_confidence
  StopRule stop_rule = StopRule::kProbability;        // forecast.stop_rule
  double stop_quantile = 0.4;                         // forecast.stop_quantile (rule both)
  StopAgainst stop_against = StopAgainst::kInterval;  // forecast.stop_against
  bool by_validation = false;                         // forecast.stop_on = validation
  double stale_after = 600;        // watch.stale_after: a run this long without a row is idle
  double max_stop_fraction = 0.5;  // watch.max_stop_fraction of the live runs per poll
  LevelModel model;                // forecast.pretrained (required)
  LevelModel final_model;          // forecast.final_model; empty: `model` to the end of the run
  const LevelModel& final_level_model() const { return final_model.empty() ? model : final_model; }
};

enum class Decision { kWait, kContinue, kStop, kFinished, kGone };
const char* decision_name(Decision d);

// What the status file says about one run at one poll. Log losses; NaN where unknown.
struct RunStatus {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  Decision decision = Decision::kWait;
  std::string reason;
  long long last_step = -1, judge_step = -1, stop_step = -1;
  double level = kNaN, final_q05 = kNaN, final_q50 = kNaN, final_q95 = kNaN;
  double beat_probability = kNaN, best_other = kNaN;
  std::string best_other_run;
  // The judgment: verdict 1 the rule stops the run, 0 it keeps it, -1 not judged yet; the
  // probability it was judged by (at judge_step).
  int verdict = -1;
  double judged_probability = kNaN;
  std::vector<long long> fan_step;  // the forecast from the newest row to the last step
  std::vector<double> fan_q05, fan_q50, fan_q95;
};

// One judgment: the run's evidence at its judgment origin.
struct Judgment {
  long long origin = -1;
  double beat_probability = RunStatus::kNaN, best_other = RunStatus::kNaN;
  double others_median = RunStatus::kNaN;  // of the group's other runs' levels at the origin
  double others_final_quantile = RunStatus::kNaN;  // forecast.stop_quantile's quantile of them
  // The run's current level at the origin and that quantile of the other runs' current levels.
  double level = RunStatus::kNaN, others_level_quantile = RunStatus::kNaN;
  LevelForecast final;
  std::string best_other_run;
  bool stop = false;
  bool kept_as_best = false;  // the rule said stop, but its forecast is the best of its group now
  bool after_end = false;     // judged once the run had finished: a stop comes too late to act
  int rung = 0;               // index into LiveJudgeSettings::rungs
  std::string restored;       // the reason of a stop restored from an earlier watch
};

// The judge keeps every run's judgments: a stop is taken once and never revised.
class LiveJudge {
 public:
  explicit LiveJudge(LiveJudgeSettings settings) : s_(std::move(settings)) {}
  // The status of every run at time `now` (seconds since the watch began), judging the runs that
  // became ready; at most watch.max_stop_fraction of the live runs are stopped in one call (the
  // rest wait for the next). `stopped_now` receives the indices of runs stopped by this call.
  std::vector<RunStatus> poll(const std::vector<LiveRun>& runs, double now,
                              std::vector<int>& stopped_now);
  // Restores a stop decided by an earlier watch of the same sweep (watch restarted), with the
  // reason it gave.
  void restore_stop(const std::string& id, long long origin, const std::string& reason);
  // The step whose newest origin judges, at rung k, the runs of a group that ends at `end` (-1:
  // end unknown).
  long long judge_step(long long end, int k = 0) const;
  const LiveJudgeSettings& settings() const { return s_; }

 private:
  // What one poll computes once: the runs' groups, each group's last step, and the levels of runs
  // at judgment origins.
  struct PollContext {
    std::vector<int> group;
    std::vector<long long> end;
    std::map<std::pair<int, long long>, LevelForecast> at_origin;
  };
  PollContext context(const std::vector<LiveRun>& runs) const;
  bool ready(const std::vector<LiveRun>& runs, int r, int k, const PollContext& ctx,
             double now) const;
  long long judge_step_of(const PollContext& ctx, int r, int k) const;
  int next_rung(const std::string& id) const;  // -1: stopped, or judged at every rung
  bool judge_and_record(const std::vector<LiveRun>& runs, int r, int k, PollContext& ctx,
                        const std::vector<RunStatus>& out, long allowed,
                        std::vector<int>& stopped_now);
  bool has_origin_row(const Curve& c, long long g) const;
  double level_at_origin(const std::vector<LiveRun>& runs, int q, long long g, PollContext& ctx,
                         LevelForecast* final) const;
  Judgment judge(const std::vector<LiveRun>& runs, int r, int k, PollContext& ctx) const;
  void refresh(const std::vector<LiveRun>& runs, const PollContext& ctx,
               std::vector<RunStatus>& out) const;
  void forecast_now(const LiveRun& run, long long end, RunStatus& st) const;
  void describe(const std::vector<LiveRun>& runs, int r, const PollContext& ctx, double now,
                bool deferred, RunStatus& st) const;
  bool best_of_group_now(const std::vector<RunStatus>& status, int r) const;
  const Judgment* judgment_of(const std::string& id) const;  // the newest, or nullptr

  LiveJudgeSettings s_;
  std::unordered_map<std::string, Judgment> judged_;  // run id -> its newest judgment
};

// The run's judgment origin for a planned-last-step judgment at `judge_step`: its newest step
// <= judge_step divisible by `every` with at least 10 entries up to it; -1 if none.
long long judgment_origin(const Curve& c, long long judge_step, long long every);

// `prefix` followed by the steps of the run's plan after its last step, with their planned
// learning rates (the prefix's own rates from the plan where it has none); `prefix` without a plan.
Curve with_plan(Curve prefix, const LiveRun& run);

// `c` cut after step `t` (validation points too).
Curve curve_upto(const Curve& c, long long t);

}  // namespace hpt::forecast
