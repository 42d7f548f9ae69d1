#include "forecast/live_judge.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/types.hpp"
#include "forecast/baselines.hpp"
#include "forecast/curve_densify.hpp"
#include "forecast/curve_study.hpp"
#include "forecast/validation_curve.hpp"
#include "forecast/validation_forecast.hpp"

namespace hpt::forecast {

namespace {

constexpr double kNaN = RunStatus::kNaN;
constexpr int kFanPoints = 8;

long long last_step(const Curve& c) {
  return c.steps.empty() ? -1 : c.steps.back();
}

std::string fmt(double v) {
  std::ostringstream out;
  out.precision(3);
  out << v;
  return out.str();
}

// Each run's group as an index, in first-seen order.
std::vector<int> group_indices(const std::vector<LiveRun>& runs) {
  std::map<std::string, int> index;
  std::vector<int> out;
  for (const LiveRun& r : runs)
    out.push_back(index.emplace(r.curve.group, int(index.size())).first->second);
  return out;
}

// The planned last step of a group: the largest `final_step` its runs logged, else
// watch.final_step (0 when neither is known), and never before a step a run of it reached.
long long group_end(const std::vector<LiveRun>& runs, const std::vector<int>& group, int gi,
                    long long final_step) {
  long long planned = 0, reached = 0;
  for (std::size_t q = 0; q < runs.size(); ++q)
    if (group[q] == gi) {
      planned = std::max(planned, runs[q].planned_end);
      reached = std::max(reached, last_step(runs[q].curve));
    }
  const long long end = planned > 0 ? planned : final_step;
  return end > 0 ? std::max(end, reached) : 0;
}

// The level the stop rule compares: the log mean of the newest 10 losses up to t, or the
// validation level.
double level_at(const Curve& c, long long t, bool by_validation) {
  if (by_validation) return validation_level(c, t);
  const int n = logged_upto(c, entries_upto(c, t));  // no loss filled in from a later one
  return n == 0 ? kNaN : forecast_last(c.loss, n);
}

}  // namespace

// `prefix` (a run's curve up to its newest row or an origin) followed by the steps of the run's
// plan after it, with their planned learning rates: the schedule the forecast's features read.
// The prefix's own rates come from the plan where the curve has none. Without a plan: `prefix`.
Curve with_plan(Curve prefix, const LiveRun& run) {
  if (run.plan_steps.empty() || prefix.steps.empty()) return prefix;
  const auto planned_at = [&](long long t) {
    const auto it = std::upper_bound(run.plan_steps.begin(), run.plan_steps.end(), t);
    return it == run.plan_steps.begin() ? run.plan_lr.front()
                                        : run.plan_lr[std::size_t(it - run.plan_steps.begin() - 1)];
  };
  if (prefix.lr.size() != prefix.steps.size()) {
    prefix.lr.clear();
    for (long long t : prefix.steps) prefix.lr.push_back(planned_at(t));
  }
  const long long t = prefix.steps.back();
  for (std::size_t i = 0; i < run.plan_steps.size(); ++i)
    if (run.plan_steps[i] > t) {
      prefix.steps.push_back(run.plan_steps[i]);
      prefix.lr.push_back(run.plan_lr[i]);
      prefix.loss.push_back(prefix.loss.back());  // never read: the history ends at t
    }
  return prefix;
}

namespace {

// The learned forecast of `c`'s level at `end` from `hist`, its history's features.
LevelForecast final_from(const Curve& c, const LevelHistory& hist, long long end,
                         const LiveJudgeSettings& s) {
  if (s.by_validation) {
    Curve val;
    validation_curve(c, val);  // empty with too few validation losses
    return final_validation(c, validation_history(val, hist.t), s.final_level_model(), hist, end);
  }
  return level_forecast_ahead(s.final_level_model(), hist, c.steps, c.lr, end - hist.t);
}

}  // namespace

const char* decision_name(Decision d) {
  switch (d) {
    case Decision::kWait:
      return "wait";
    case Decision::kContinue:
      return "continue";
    case Decision::kStop:
      return "stop";
    case Decision::kFinished:
      return "finished";
    case Decision::kGone:
      return "gone";
  }
  return "?";
}

long long judgment_origin(const Curve& c, long long judge_step, long long every) {
  for (int i = entries_upto(c, judge_step) - 1; i + 1 >= kMinOriginEntries; --i)
    if (origin_entry(c, i, every)) return c.steps[std::size_t(i)];
  return -1;
}

Curve curve_upto(const Curve& c, long long t) {
  Curve out = c;
  const std::size_t n = std::size_t(entries_upto(c, t));
  out.steps.resize(n);
  out.loss.resize(n);
  if (!out.grad_norm.empty()) out.grad_norm.resize(n);
  if (!out.lr.empty()) out.lr.resize(std::min(n, out.lr.size()));
  const auto v = std::upper_bound(c.val_steps.begin(), c.val_steps.end(), t) - c.val_steps.begin();
  out.val_steps.resize(std::size_t(v));
  out.val_loss.resize(std::size_t(v));
  return out;
}

long long LiveJudge::judge_step(long long end, int k) const {
  return end > 0 ? (long long)std::floor(s_.rungs[std::size_t(k)] * double(end)) : -1;
}

long long LiveJudge::judge_step_of(const PollContext& ctx, int r, int k) const {
  return judge_step(ctx.end[std::size_t(ctx.group[std::size_t(r)])], k);
}

int LiveJudge::next_rung(const std::string& id) const {
  const Judgment* j = judgment_of(id);
  if (!j) return 0;
  return j->stop || j->rung + 1 >= int(s_.rungs.size()) ? -1 : j->rung + 1;
}

void LiveJudge::restore_stop(const std::string& id, long long origin, const std::string& reason) {
  Judgment j;
  j.origin = origin;
  j.stop = true;
  j.restored = reason;
  j.rung = int(s_.rungs.size()) - 1;
  judged_[id] = j;
}

// A run is judged at rung k once it has passed that rung's judgment step and every other run of
// its group has reached its origin, ended, been stopped, vanished or gone idle (watch.stale_after).
bool LiveJudge::ready(const std::vector<LiveRun>& runs, int r, int k, const PollContext& ctx,
                      double now) const {
  const LiveRun& run = runs[std::size_t(r)];
  const long long judge_at = judge_step_of(ctx, r, k);
  if (run.ended || run.gone || judge_at < 0 || last_step(run.curve) < judge_at) return false;
  const long long origin = judgment_origin(run.curve, judge_at, s_.every);
  for (const LiveRun& q : runs) {
    if (q.curve.group != run.curve.group || last_step(q.curve) >= origin || q.ended || q.gone ||
        now - q.grown_at >= s_.stale_after)
      continue;
    const Judgment* jq = judgment_of(q.curve.id);
    if (!(jq && jq->stop)) return false;
  }
  return true;
}

// Whether curve c has an origin entry at step g with 10 entries up to it (a row to forecast from).
bool LiveJudge::has_origin_row(const Curve& c, long long g) const {
  const int n = entries_upto(c, g);
  return n >= kMinOriginEntries && c.steps[std::size_t(n - 1)] == g &&
         origin_entry(c, n - 1, s_.every);
}

// The level of run q at origin g for the stop rule, computed once per poll: the forecast final
// median where q has an origin entry at g and 10 entries (the forecast itself in `final`), else its
// level.
double LiveJudge::level_at_origin(const std::vector<LiveRun>& runs, int q, long long g,
                                  PollContext& ctx, LevelForecast* final) const {
  const auto key = std::make_pair(q, g);
  auto it = ctx.at_origin.find(key);
  if (it == ctx.at_origin.end()) {
    const Curve& c = runs[std::size_t(q)].curve;
    const int n = entries_upto(c, g);
    LevelForecast f;
    f.mid = f.lo = f.hi = kNaN;
    if (has_origin_row(c, g)) {
      const Curve upto = with_plan(curve_upto(c, g), runs[std::size_t(q)]);
      f = final_from(upto, level_history(upto.steps, upto.loss, n),
                     ctx.end[std::size_t(ctx.group[std::size_t(q)])], s_);
    } else if (n > 0)
      f.mid = level_at(c, g, s_.by_validation);
    it = ctx.at_origin.emplace(key, f).first;
  }
  if (final) *final = it->second;
  return it->second.mid;
}

// The rule of run.mode = forecast at run r's judgment origin g: every run of its group as it was at
// g, the run stopped when it beats the best of the others with probability below 1 - confidence.
Judgment LiveJudge::judge(const std::vector<LiveRun>& runs, int r, int k, PollContext& ctx) const {
  Judgment j;
  j.rung = k;
  j.origin = judgment_origin(runs[std::size_t(r)].curve, judge_step_of(ctx, r, k), s_.every);
  if (j.origin < 0) return j;
  std::vector<double> level(runs.size(), kNaN);
  Leaders l;
  ForecastRanks ranks{GroupLeaders(1), GroupLeaders(1)};  // of the runs forecast at the origin
  for (std::size_t q = 0; q < runs.size(); ++q) {
    const Curve& c = runs[q].curve;
    if (ctx.group[q] != ctx.group[std::size_t(r)] || c.steps.empty() || c.steps[0] > j.origin)
      continue;
    level[q] = level_at_origin(runs, int(q), j.origin, ctx, int(q) == r ? &j.final : nullptr);
    l.add(int(q), level[q]);
    if (!has_origin_row(c, j.origin) || std::isnan(level[q])) continue;
    ranks.finals[0].add(int(q), level[q]);
    ranks.levels[0].add(int(q), level_at(c, j.origin, s_.by_validation));
  }
  l.finish();
  ranks.finals[0].finish();
  ranks.levels[0].finish();
  j.best_other = l.best_other(r);
  if (std::isnan(j.best_other)) return j;
  j.best_other_run = runs[std::size_t(l.best_other_run(r))].curve.id;
  j.others_median = l.median_other(level[std::size_t(r)]);
  j.others_final_quantile = ranks.finals[0].quantile_other(j.final.mid, s_.stop_quantile);
  j.level = level_at(runs[std::size_t(r)].curve, j.origin, s_.by_validation);
  j.others_level_quantile = ranks.levels[0].quantile_other(j.level, s_.stop_quantile);
  LevelForecast other;  // cached: every member's level at the origin was computed above
  level_at_origin(runs, l.best_other_run(r), j.origin, ctx, &other);
  j.beat_probability = beat_probability(s_.stop_against, j.final, other);
  const StopEvidence e{j.beat_probability,      j.final.mid, j.others_median,
                       j.others_final_quantile, j.level,     j.others_level_quantile};
  j.stop = stop_verdict(s_.stop_rule, e, 1.0 - s_.stop_confidence);
  return j;
}

LiveJudge::PollContext LiveJudge::context(const std::vector<LiveRun>& runs) const {
  PollContext ctx;
  ctx.group = group_indices(runs);
  const int groups = runs.empty() ? 0 : *std::max_element(ctx.group.begin(), ctx.group.end()) + 1;
  for (int gi = 0; gi < groups; ++gi)
    ctx.end.push_back(group_end(runs, ctx.group, gi, s_.final_step));
  return ctx;
}

const Judgment* LiveJudge::judgment_of(const std::string& id) const {
  const auto it = judged_.find(id);
  return it == judged_.end() ? nullptr : &it->second;
}

// The run's level now, its forecast at `end` and the fan to it, from its newest row.
void LiveJudge::forecast_now(const LiveRun& run, long long end, RunStatus& st) const {
  st.last_step = last_step(run.curve);
  if (run.curve.steps.empty()) return;
  st.level = level_at(run.curve, st.last_step, s_.by_validation);
  st.final_q50 = st.level;
  const int n = int(run.curve.steps.size());
  if (n < kMinOriginEntries) return;
  const Curve c = with_plan(run.curve, run);
  const LevelHistory hist = level_history(c.steps, c.loss, n);
  const LevelForecast f = final_from(c, hist, end, s_);
  st.final_q05 = f.lo, st.final_q50 = f.mid, st.final_q95 = f.hi;
  for (int k = 1; k <= kFanPoints && end > st.last_step; ++k) {
    const long long h = (end - st.last_step) * k / kFanPoints;
    const LevelForecast p = level_forecast_ahead(s_.model, hist, c.steps, c.lr, h);
    st.fan_step.push_back(st.last_step + h);
    st.fan_q05.push_back(p.lo), st.fan_q50.push_back(p.mid), st.fan_q95.push_back(p.hi);
  }
}

// Every run's forecast from its newest row (on the host's threads), then the best other run of its
// group by those forecasts and its probability of beating it.
void LiveJudge::refresh(const std::vector<LiveRun>& runs, const PollContext& ctx,
                        std::vector<RunStatus>& out) const {
  Kokkos::parallel_for(
      "hpt::watch_forecasts", Kokkos::RangePolicy<HostExec>(0, int(runs.size())), [&](int r) {
        out[std::size_t(r)].judge_step =
            judgment_origin(runs[std::size_t(r)].curve, judge_step_of(ctx, r, 0), s_.every);
        forecast_now(runs[std::size_t(r)], ctx.end[std::size_t(ctx.group[std::size_t(r)])],
                     out[std::size_t(r)]);
      });
  HostExec().fence();
  GroupLeaders leaders(ctx.end.size());
  for (std::size_t q = 0; q < runs.size(); ++q)
    leaders[std::size_t(ctx.group[q])].add(int(q), out[q].final_q50);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    RunStatus& st = out[r];
    const int q = leaders[std::size_t(ctx.group[r])].best_other_run(int(r));
    if (q >= 0) {
      st.best_other = out[std::size_t(q)].final_q50;
      st.best_other_run = runs[std::size_t(q)].curve.id;
    }
    if (std::isnan(st.best_other) || std::isnan(st.final_q05)) continue;
    const RunStatus& o = out[std::size_t(q)];
    st.beat_probability =
        beat_probability(s_.stop_against, {st.final_q50, st.final_q05, st.final_q95},
                         {o.final_q50, o.final_q05, o.final_q95});
  }
}

// Run r's forecast final median is the lowest of its group now.
bool LiveJudge::best_of_group_now(const std::vector<RunStatus>& status, int r) const {
  const RunStatus& st = status[std::size_t(r)];
  return std::isnan(st.best_other) || st.final_q50 <= st.best_other;
}

std::vector<RunStatus> LiveJudge::poll(const std::vector<LiveRun>& logged, double now,
                                       std::vector<int>& stopped_now) {
  // A run logged every few steps is judged step by step, as forecast mode reads it.
  std::vector<LiveRun> densified_runs;
  const bool any_sparse = std::any_of(logged.begin(), logged.end(),
                                      [](const LiveRun& r) { return densifiable(r.curve); });
  if (any_sparse) {
    densified_runs = logged;
    for (LiveRun& r : densified_runs) densify_if_sparse(r.curve);
  }
  const std::vector<LiveRun>& runs = any_sparse ? densified_runs : logged;
  PollContext ctx = context(runs);
  std::vector<RunStatus> out(runs.size());
  refresh(runs, ctx, out);
  long live = 0;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const Judgment* j = judgment_of(runs[r].curve.id);
    live += !runs[r].ended && !runs[r].gone && !(j && j->stop) &&
            (ctx.end[std::size_t(ctx.group[r])] == 0 ||
             out[r].last_step < ctx.end[std::size_t(ctx.group[r])]);
  }
  const long allowed = long(std::floor(s_.max_stop_fraction * double(live)));
  std::vector<char> deferred(runs.size(), 0);
  for (int r = 0; r < int(runs.size()); ++r)
    for (int k = next_rung(runs[std::size_t(r)].curve.id); k >= 0 && ready(runs, r, k, ctx, now);
         k = next_rung(runs[std::size_t(r)].curve.id))
      if (!judge_and_record(runs, r, k, ctx, out, allowed, stopped_now)) {
        deferred[std::size_t(r)] = 1;  // judged again, on the same evidence, at the next poll
        break;
      }
  for (int r = 0; r < int(runs.size()); ++r)
    describe(runs, r, ctx, now, deferred[std::size_t(r)] != 0, out[std::size_t(r)]);
  return out;
}

// Judges run r at rung k and records the judgment; false when its stop is deferred instead
// (watch.max_stop_fraction of the live runs already stopped in this poll).
bool LiveJudge::judge_and_record(const std::vector<LiveRun>& runs, int r, int k, PollContext& ctx,
                                 const std::vector<RunStatus>& out, long allowed,
                                 std::vector<int>& stopped_now) {
  Judgment j = judge(runs, r, k, ctx);
  j.after_end = out[std::size_t(r)].last_step >= ctx.end[std::size_t(ctx.group[std::size_t(r)])];
  if (j.stop && !j.after_end && best_of_group_now(out, r)) j.stop = false, j.kept_as_best = true;
  if (j.stop && !j.after_end && long(stopped_now.size()) >= allowed) return false;
  judged_[runs[std::size_t(r)].curve.id] = j;
  if (j.stop && !j.after_end) stopped_now.push_back(r);
  return true;
}

namespace {

std::string judged_words(const Judgment& j, StopRule rule, double below) {
  if (j.origin < 0) return "no origin with 10 rows at or before the judgment step: never stopped";
  if (std::isnan(j.beat_probability))
    return "at step " + std::to_string(j.origin) + ": no other run to compare with";
  std::string s = "at step " + std::to_string(j.origin) + ": P(final below '" + j.best_other_run +
                  "') = " + fmt(j.beat_probability) +
                  (j.beat_probability < below ? " < " : " >= ") + fmt(below) +
                  ": forecast final log loss " + fmt(j.final.mid) + " [" + fmt(j.final.lo) + ", " +
                  fmt(j.final.hi) + "] against that run's forecast median " + fmt(j.best_other);
  const auto above = [](double v, double q) { return v > q ? " above " : " not above "; };
  if (rule == StopRule::kBoth) {
    s += std::string("; rule both: forecast median") + above(j.final.mid, j.others_final_quantile) +
         fmt(j.others_final_quantile) + " and level " + fmt(j.level) +
         above(j.level, j.others_level_quantile) + fmt(j.others_level_quantile) +
         ", the other runs' quantiles";
  } else {
    if (j.stop && j.final.lo > j.best_other)
      s += "; the 90 % interval lies above it by " + fmt(j.final.lo - j.best_other) + " log units";
    if (j.stop && rule == StopRule::kMedian && j.beat_probability >= below)
      s += "; its forecast median lies above the median " + fmt(j.others_median) +
           " of the other runs' (median rule)";
  }
  if (j.kept_as_best) s += "; kept: its forecast is the best of its group now";
  return s;
}

}  // namespace

// The decision of run r at this poll and the reason in words.
void LiveJudge::describe(const std::vector<LiveRun>& runs, int r, const PollContext& ctx,
                         double now, bool deferred, RunStatus& st) const {
  const LiveRun& run = runs[std::size_t(r)];
  const Judgment* j = judgment_of(run.curve.id);
  const double below = 1.0 - s_.stop_confidence;
  if (j && j->origin >= 0) st.judge_step = j->origin;
  if (j) st.verdict = j->stop ? 1 : 0, st.judged_probability = j->beat_probability;
  if (j && j->stop && !j->after_end) {
    st.stop_step = j->origin;
    st.decision = Decision::kStop;
    st.reason =
        j->restored.empty() ? "stopped " + judged_words(*j, s_.stop_rule, below) : j->restored;
  } else if (run.gone) {
    st.decision = Decision::kGone, st.reason = "its file vanished";
  } else if (run.ended) {
    st.decision = Decision::kFinished;
    st.reason = "its loss turned non-finite after step " + std::to_string(st.last_step);
  } else if (ctx.end[std::size_t(ctx.group[std::size_t(r)])] > 0 &&
             st.last_step >= ctx.end[std::size_t(ctx.group[std::size_t(r)])]) {
    st.decision = Decision::kFinished;
    st.reason = "reached the planned last step";
    if (j && j->after_end)
      st.reason += std::string("; the rule, too late to act, ") +
                   (j->stop ? "would have stopped it " : "kept it ") +
                   judged_words(*j, s_.stop_rule, below);
  } else if (j) {
    st.decision = Decision::kContinue;
    st.reason = "continues: judged " + judged_words(*j, s_.stop_rule, below);
    const int k = next_rung(run.curve.id);
    if (k > 0) st.reason += "; judged again at step " + std::to_string(judge_step_of(ctx, r, k));
  } else if (deferred) {
    st.reason =
        "stop deferred to the next poll: watch.max_stop_fraction of the live runs were "
        "stopped in this one";
  } else if (judge_step_of(ctx, r, 0) < 0) {
    st.reason = "no planned last step: set watch.final_step or log a final_step column";
  } else if (st.last_step < judge_step_of(ctx, r, 0)) {
    st.reason = "judged once it reaches step " + std::to_string(judge_step_of(ctx, r, 0));
  } else {
    st.reason = now - run.grown_at >= s_.stale_after
                    ? "idle: no row for watch.stale_after seconds"
                    : "waits for the other runs of its group to reach step " +
                          std::to_string(st.judge_step);
  }
}

}  // namespace hpt::forecast
