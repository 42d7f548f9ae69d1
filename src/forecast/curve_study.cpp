#include "forecast/curve_study.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>

#include "forecast/logged_anchor.hpp"
#include "forecast/origin_share.hpp"
#include "forecast/power_guard.hpp"
#include "forecast/sweep_half_floor.hpp"
#include "forecast/validation_curve.hpp"
#include "kernels/ensemble_rollout.hpp"

namespace hpt::forecast {

namespace {

constexpr double kNaN = ForecastRow::kNaN;

// Every step of any run, in order: all runs walk forward together.
std::vector<long long> step_grid(const std::vector<Curve>& runs) {
  std::vector<long long> grid;
  for (const auto& run : runs) grid.insert(grid.end(), run.steps.begin(), run.steps.end());
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

// The record of entry i of `run` at step g.
TelemetryRecord entry_record(const Curve& run, int i, long long g) {
  TelemetryRecord rec;
  rec.active = true;
  rec.step = g;
  rec.phase = telemetry::kFull;
  rec.steps_in_phase = i;
  rec.has_loss = true;
  rec.loss = run.loss[std::size_t(i)];
  rec.has_grad = !run.grad_norm.empty();
  rec.grad_norm = rec.has_grad ? run.grad_norm[std::size_t(i)] : 0.0;
  rec.lr = run.lr.empty() ? 0.0 : run.lr[std::size_t(i)];
  rec.effective_lr = rec.lr;
  const double val = validation_at(run, run.steps[std::size_t(i)]);
  rec.has_val_loss = !std::isnan(val);
  rec.val_loss = rec.has_val_loss ? val : 0.0;
  return rec;
}

// Run r of the stop list: judged at its latest origin at or before entry stop_at * length.
void judge_run(const Curve& run, int r, const std::vector<OriginRow>& origins, bool by_validation,
               StopList& s) {
  const std::size_t i = std::size_t(r);
  s.final_log_loss[i] = by_validation ? validation_level(run, run.steps.back())
                                      : forecast_last(run.loss, int(run.loss.size()));
  const int judge_entries = std::max(1, int(std::floor(s.stop_at * double(run.steps.size()))));
  const long long judge_step = run.steps[std::size_t(judge_entries - 1)];
  for (const OriginRow& o : origins) {
    if (o.run != r) continue;
    s.latest_beat[i] = o.beat_probability;
    if (o.origin <= judge_step) {
      s.stop_origin[i] = o.origin;
      s.judged[i] = {o.beat_probability,      o.final_mid, o.others_median,
                     o.others_final_quantile, o.level,     o.others_level_quantile};
    }
  }
  if (s.stop_origin[i] >= 0 && stop_verdict(s.rule, s.judged[i], s.below_probability)) {
    s.stopped[i] = 1;
    s.steps_saved[i] = run.steps.size() - std::size_t(entries_upto(run, s.stop_origin[i]));
  }
}

}  // namespace

namespace {

// Each run's group as an index (runs without a group share one).
std::vector<int> group_indices(const std::vector<Curve>& runs) {
  std::map<std::string, int> index;
  std::vector<int> out;
  for (const Curve& c : runs)
    out.push_back(index.emplace(c.group, int(index.size())).first->second);
  if (out.empty()) out.push_back(0);
  return out;
}

// Each group's last step: of its longest run (the sweep's planned length).
std::vector<long long> group_ends(const std::vector<Curve>& runs, const std::vector<int>& group) {
  std::vector<long long> end(std::size_t(*std::max_element(group.begin(), group.end()) + 1), 0);
  for (std::size_t r = 0; r < runs.size(); ++r)
    if (!runs[r].steps.empty())
      end[std::size_t(group[r])] = std::max(end[std::size_t(group[r])], runs[r].steps.back());
  return end;
}

std::vector<ScheduleAreas> schedule_areas_of(const std::vector<Curve>& runs) {
  std::vector<ScheduleAreas> out;
  for (const Curve& c : runs) out.push_back(schedule_areas(c.steps, c.lr));
  return out;
}

constexpr int kCombinedExperts = 4;  // experts_of's

// The experts of the combined forecast: the learned level forecast (`last` without a model) first,
// then `last`, `loglin` and `power` where its law decays (a flat law is no forecast of a level that
// moves: it is what a saturating power law fits to a loss that rises). The guards that `hold`
// names (with a level model, see CurveStudy::guard_hold) are held inside the learned 90 % interval:
// they may pull the forecast across it, never beyond it (a trend extrapolated into a plateau cannot
// drag it away).
std::vector<double> experts_of(const ForecastRow& row, GuardHold hold) {
  std::vector<double> experts{row.base[kLearnedSlot], row.base[0], row.base[1], row.power_guard};
  const double lo = row.base_lo[kLearnedSlot], hi = row.base_hi[kLearnedSlot];
  for (std::size_t i = 1; i < experts.size(); ++i) {
    const bool held = i == 2 ? hold.loglin : hold.others;
    if (held && std::isfinite(experts[i]) && lo <= hi) experts[i] = std::clamp(experts[i], lo, hi);
  }
  return experts;
}

// The unit of the combined forecast's evidence: the width of the learned 90 % interval (1 without
// a level model).
double evidence_unit(const ForecastRow& row, bool learned) {
  return learned ? row.base_hi[kLearnedSlot] - row.base_lo[kLearnedSlot] : 1.0;
}

// Each run's validation curve (forecast/validation_curve.hpp); empty where it has too few
// validation losses.
std::vector<Curve> validation_curves_of(const std::vector<Curve>& runs) {
  std::vector<Curve> out(runs.size());
  for (std::size_t r = 0; r < runs.size(); ++r) validation_curve(runs[r], out[r]);
  return out;
}

// The steps between two origins of each run: forecast.every, or a densified run's logging
// interval where that is longer (each logged step is then an origin).
std::vector<long long> origin_spacings(const std::vector<Curve>& runs, long long every) {
  std::vector<long long> out;
  for (const Curve& c : runs) out.push_back(std::max(every, c.logged_every));
  return out;
}

// Each run's clock for the combined forecast: 1, or with forecast.combination_clock = length its
// group's planned length over the length the combination's constants are set for.
std::vector<double> combination_clocks(const std::vector<int>& group,
                                       const std::vector<long long>& group_end, bool by_length) {
  std::vector<double> out;
  for (int g : group)
    out.push_back(by_length ? double(std::max(group_end[std::size_t(g)], 1LL)) /
                                  ForecastCombination::kReferenceSteps
                            : 1.0);
  return out;
}

}  // namespace

// The combined forecast's raw interval: the learned one moved with it, a half without width given
// the other's (with neither, `last`'s empirical half-widths).
Interval combined_raw_interval(const ForecastRow& row) {
  constexpr int kLast = 0;
  const double mid = row.base[kCombinedSlot];
  const double shift = mid - row.base[kLearnedSlot];
  return with_both_halves(
      {row.base_lo[kLearnedSlot] + shift, mid, row.base_hi[kLearnedSlot] + shift},
      row.base[kLast] - row.base_lo[kLast], row.base_hi[kLast] - row.base[kLast]);
}

CurveStudy::CurveStudy(const std::vector<Curve>& runs, const CurveStudySettings& settings,
                       RssmDynamics& dynamics, Encoder& encoder, const Communicator& comm)
    : runs_(runs),
      settings_(settings),
      dynamics_(dynamics),
      encoder_(encoder),
      forecaster_(dynamics, int(runs.size()), settings.scenarios, settings.horizons, settings.seed,
                  encoder.feature_update(), encoder.clamp(), settings.training,
                  settings.train_runs),
      calibration_(int(settings.horizons.size()), settings.calibration, 0.90,
                   settings.calibration_rate, settings.calibration_window),
      combined_calibration_(int(settings.horizons.size()), settings.calibration, 0.90,
                            settings.calibration_rate, settings.calibration_window),
      validation_calibration_(int(settings.horizons.size()), settings.calibration, 0.90,
                              settings.calibration_rate, settings.calibration_window),
      base_errors_(std::size_t(kBaselines * int(settings.horizons.size()))),
      group_(group_indices(runs)),
      group_end_(group_ends(runs, group_)),
      areas_(schedule_areas_of(runs)),
      validation_curves_(validation_curves_of(runs)),
      combination_(origin_spacings(runs, settings.every), kCombinedExperts, settings.horizons,
                   combination_clocks(group_, group_end_, settings.combination_by_length)),
      finetuner_(settings.level_model, settings.finetune, runs, group_),
      comm_(comm),
      history_(encoder.create_history(int(runs.size()))),
      grid_(step_grid(runs)),
      next_(runs.size(), 0) {
  const int R = runs_count();
  state_.features = View2<real>("hpt::forecast_features", R, kFeatures);
  state_.loss_states = View1<LossState<real>>("hpt::forecast_loss_states", R);
  state_.active = View1<int>("hpt::forecast_active", R);
  state_.log_loss = View1<real>("hpt::forecast_log_loss", R);
  state_.active_host.assign(std::size_t(R), 0);
  host_log_loss_ = Kokkos::create_mirror_view(state_.log_loss);
  origin_active_ = View1<int>("hpt::forecast_origin_active", R);
  records_ = decltype(records_)("hpt::forecast_records", R);
  host_records_ = Kokkos::create_mirror_view(records_);
  host_active_ = Kokkos::create_mirror_view(state_.active);
  host_origin_ = Kokkos::create_mirror_view(origin_active_);
  const RunBlock block = run_block(R, comm_.rank(), comm_.size());
  first_run_ = block.first, end_run_ = block.end;
}

// With a level model; with forecast.guard_clamp = length or trend only on runs of at least a
// quarter of the reference length (the learned interval, fitted on step-level curves, is no bound
// for the guards of a run logged at a few dozen points), except that with trend a short run's
// `loglin` stays held where its slope is not significant (a line through noise).
GuardHold CurveStudy::guard_hold(const ForecastRow& row) const {
  if (settings_.level_model.empty()) return {};
  const double length = double(group_end_[std::size_t(group_[std::size_t(row.run)])]);
  if (settings_.guard_clamp == GuardClamp::kAlways ||
      length >= ForecastCombination::kMinClampClock * ForecastCombination::kReferenceSteps)
    return {true, true};
  const bool noise = !(row.loglin_t >= ForecastCombination::kTrendSignificance);
  return {false, settings_.guard_clamp == GuardClamp::kTrend && noise};
}

CurveStudyResult CurveStudy::run(const std::function<void(const ReplayProgress&)>& progress) {
  Kokkos::Profiling::pushRegion("hpt::forecast_mode");
  replay(progress);
  Kokkos::Profiling::popRegion();

  CurveStudyResult result;
  result.horizons = settings_.horizons;
  result.every = settings_.every;
  result.train_runs = settings_.train_runs;
  result.steps = grid_.size();
  result.training_updates = forecaster_.updates();
  result.scores = score_rows(rows_, horizon_count());
  for (int k = 0; k < horizon_count(); ++k)
    result.width_factor.push_back(calibration_.width_factor(k));
  result.stop =
      judge_stops(runs_, origins_, settings_.stop_at, settings_.stop_confidence,
                  settings_.stop_on_validation, settings_.stop_rule, settings_.stop_quantile);
  result.validation_scores = score_validation(validation_, horizon_count());
  result.validation = std::move(validation_);
  result.timings = timings_;
  result.finetune_refits = finetuner_.refits();
  result.finetune_samples = finetuner_.samples();
  result.beat_method =
      judge_by_final()
          ? "learned level forecaster: P(the run's log loss at its group's last step < the lowest "
            "forecast final median of the other runs of its group), under the two-piece normal of "
            "its 5/50/95 % quantiles"
          : "fraction of hpt's calibrated sample paths (largest horizon) below the lowest current "
            "log loss (log mean of the newest 10 losses) of the other runs of its group";
  result.rollout_gflops =
      timings_.forecast_seconds > 0
          ? timings_.member_steps *
                rollout_flops_per_member_step(dynamics_.hidden(), dynamics_.input(),
                                              dynamics_.stochastic()) /
                timings_.forecast_seconds * 1e-9
          : 0.0;
  result.rows = std::move(rows_);
  result.origins = std::move(origins_);
  return result;
}

// At every step of the grid: 1. push the records, encode, filter and train; 2. score the targets
// that became known; 3. fine-tune the learned model when due; 4. forecast at the origins.
void CurveStudy::replay(const std::function<void(const ReplayProgress&)>& progress) {
  Kokkos::fence();
  Kokkos::Timer timer;
  std::size_t walked = 0;
  double last_line = 0;
  for (const long long g : grid_) {
    push_step(g);
    observe_and_train();
    // A line every run.print_every steps, and at least every few seconds on long work.
    const double now = timer.seconds();
    if (++walked % settings_.print_every == 0 || walked == grid_.size() ||
        now - last_line >= kProgressSeconds) {
      progress({g, walked, grid_.size(), now, timings_.run_steps});
      last_line = now;
    }
    score_due(g);
    const double refit_from = timer.seconds();
    finetuner_.advance(g);
    timings_.finetune_seconds += timer.seconds() - refit_from;
    forecast_at_origin(g);  // runs at an origin entry (forecast.every, or a logged step after it)
  }
  Kokkos::fence();
  timings_.seconds = timer.seconds();
}

// The record of every run that has step g (inactive for the others), copied to the device.
void CurveStudy::push_step(long long g) {
  for (int r = 0; r < runs_count(); ++r) {
    const Curve& run = runs_[std::size_t(r)];
    const int i = next_[std::size_t(r)];
    TelemetryRecord rec;
    rec.active = i < int(run.steps.size()) && run.steps[std::size_t(i)] == g;
    if (rec.active) {
      rec = entry_record(run, i, g);
      next_[std::size_t(r)] = i + 1;
      ++timings_.run_steps;
    }
    host_records_(r) = rec;
    host_active_(r) = rec.active ? 1 : 0;
    state_.active_host[std::size_t(r)] = host_active_(r);
    host_log_loss_(r) = rec.active ? real(std::log(std::max(rec.loss, kMinLoss))) : 0;
  }
  Kokkos::deep_copy(records_, host_records_);
  Kokkos::deep_copy(state_.active, host_active_);
  Kokkos::deep_copy(state_.log_loss, host_log_loss_);
}

// Encodes the pushed records and filters the latents; the shared ensemble learns from the runs'
// newest transitions.
void CurveStudy::observe_and_train() {
  if (!settings_.ensemble) return;
  push_records(ExecSpace(), history_, View1<const TelemetryRecord>(records_));
  encoder_.encode(history_, state_.features);
  forecaster_.observe(state_);
  Kokkos::Timer train_timer;
  forecaster_.train();
  Kokkos::fence();
  timings_.train_seconds += train_timer.seconds();
}

// Targets that became known with step g: scores them, updates the calibration and the baselines'
// error records (in the order the forecasts were made).
void CurveStudy::score_due(long long g) {
  const int K = horizon_count();
  std::vector<std::vector<char>> batch_inside(static_cast<std::size_t>(K));
  std::vector<std::vector<double>> batch_scores(static_cast<std::size_t>(K));
  std::vector<std::vector<double>> batch_errors(base_errors_.size());
  std::vector<std::vector<char>> combined_inside(static_cast<std::size_t>(K));
  std::vector<std::vector<double>> combined_scores(static_cast<std::size_t>(K));
  for (auto it = due_.begin(); it != due_.end() && it->first <= g; it = due_.erase(it)) {
    ForecastRow& row = rows_[it->second];
    if (settings_.ensemble) {
      row.inside = (row.target >= row.q05 && row.target <= row.q95) ? 1 : 0;
      batch_inside[std::size_t(row.k)].push_back(char(row.inside));
      batch_scores[std::size_t(row.k)].push_back(
          conformal_score(row.target, row.raw_q05, row.q50, row.raw_q95));
    }
    for (int b = 0; b < kBaselines; ++b) {
      if (!std::isnan(row.base_lo[b]))
        row.base_inside[b] = (row.target >= row.base_lo[b] && row.target <= row.base_hi[b]);
      batch_errors[std::size_t(b * K + row.k)].push_back(row.target - row.base[b]);
    }
    const bool learned = !settings_.level_model.empty();
    combination_.update(row.run, row.k, it->first, experts_of(row, guard_hold(row)), row.target,
                        evidence_unit(row, learned));
    if (learned && row.base_inside[kCombinedSlot] >= 0) {
      const Interval raw{row.combined_raw_lo, row.base[kCombinedSlot], row.combined_raw_hi};
      combined_inside[std::size_t(row.k)].push_back(char(row.base_inside[kCombinedSlot]));
      combined_scores[std::size_t(row.k)].push_back(
          conformal_score(row.target, raw.lo, raw.mid, raw.hi));
    }
  }
  for (std::size_t i = 0; i < base_errors_.size(); ++i)
    base_errors_[i].add_batch(std::move(batch_errors[i]));
  score_due_validation(g);
  for (int k = 0; k < K; ++k) {
    calibration_.update_batch(k, batch_inside[std::size_t(k)], batch_scores[std::size_t(k)]);
    combined_calibration_.update_batch(k, combined_inside[std::size_t(k)],
                                       combined_scores[std::size_t(k)]);
  }
}

// Validation points measured by step g: their forecasts' coverage and conformal scores update the
// validation calibration (in the order the forecasts were made).
void CurveStudy::score_due_validation(long long g) {
  const int K = horizon_count();
  std::vector<std::vector<char>> inside(static_cast<std::size_t>(K));
  std::vector<std::vector<double>> scores(static_cast<std::size_t>(K));
  for (auto it = validation_due_.begin(); it != validation_due_.end() && it->first <= g;
       it = validation_due_.erase(it)) {
    const ValidationRow& v = validation_[it->second];
    if (!std::isfinite(v.f.target)) continue;
    inside[std::size_t(v.k)].push_back(char(v.f.target >= v.f.lo && v.f.target <= v.f.hi));
    scores[std::size_t(v.k)].push_back(
        conformal_score(v.f.target, v.f.raw_lo, v.f.mid, v.f.raw_hi));
  }
  for (int k = 0; k < K; ++k)
    validation_calibration_.update_batch(k, inside[std::size_t(k)], scores[std::size_t(k)]);
}

// Marks the origin runs (active, with enough history) on the host; returns their number.
int CurveStudy::mark_origin_runs() {
  int origin_runs = 0;
  for (int r = 0; r < runs_count(); ++r) {
    const int n = next_[std::size_t(r)];
    host_origin_(r) = host_active_(r) && n >= kMinOriginEntries &&
                      origin_entry(runs_[std::size_t(r)], n - 1, settings_.every);
    origin_runs += host_origin_(r);
  }
  return origin_runs;
}

// An origin: every active run with enough history is forecast at every horizon, by the ensemble
// and the baselines (and its validation points by the learned change), and gets its probability of
// beating the best other run.
void CurveStudy::forecast_at_origin(long long g) {
  if (mark_origin_runs() == 0) return;
  OriginWork w;
  for (int r = 0; r < runs_count(); ++r)
    if (host_origin_(r)) w.marked.push_back(r);
  // Over several processes each forecasts the marked runs of its block, and all then hold every
  // marked run's forecasts.
  const MarkedRange mine = marked_range(w.marked, {first_run_, end_run_});
  const CurveForecast f = settings_.ensemble ? ensemble_forecast(w.marked, mine) : CurveForecast{};
  const std::size_t K = std::size_t(horizon_count());
  w.rows.resize(w.marked.size() * K);
  w.validation.resize(w.marked.size() * K);
  w.finals.resize(w.marked.size());
  // The runs' fits and rows are independent: made on the host's threads, kept in run order.
  Kokkos::parallel_for("hpt::forecast_origin_rows",
                       Kokkos::RangePolicy<HostExec>(int(mine.lo), int(mine.hi)),
                       [&](int i) { forecast_run(f, g, std::size_t(i), w); });
  HostExec().fence();
  share_origin_work(comm_, mine, horizon_count(), w);
  calibrate_combined(w.rows);
  const GroupLeaders leaders = group_leaders(w.marked, w.finals, g);
  const ForecastRanks ranks = forecast_ranks(w.marked, w.finals, g);
  std::vector<LevelForecast> by_run(runs_.size(), LevelForecast{kNaN, kNaN, kNaN});
  for (std::size_t i = 0; i < w.marked.size(); ++i) by_run[std::size_t(w.marked[i])] = w.finals[i];
  // Each judgment reads only the shared forecasts: on the host's threads too, kept in run order.
  std::vector<OriginRow> judged(w.marked.size());
  Kokkos::parallel_for("hpt::forecast_origin_judgments",
                       Kokkos::RangePolicy<HostExec>(0, int(w.marked.size())), [&](int i) {
                         judged[std::size_t(i)] =
                             origin_row(f, w.marked[std::size_t(i)], g, by_run, leaders, ranks);
                       });
  HostExec().fence();
  origins_.insert(origins_.end(), judged.begin(), judged.end());
  for (const ForecastRow& row : w.rows) {
    if (!std::isnan(row.target))  // known once the window's last loss is logged
      due_.emplace(first_logged_from(runs_[std::size_t(row.run)],
                                     g + settings_.horizons[std::size_t(row.k)] + kTargetAfter),
                   rows_.size());
    rows_.push_back(row);
  }
  for (const ValidationRow& v : w.validation)
    if (v.f.val_step >= 0) {
      validation_due_.emplace(v.f.val_step, validation_.size());
      validation_.push_back(v);
    }
}

// The i-th marked run of an origin: its rows at every horizon, its validation forecasts and the
// forecast of its final level.
void CurveStudy::forecast_run(const CurveForecast& f, long long g, std::size_t i,
                              OriginWork& w) const {
  const int r = w.marked[i], K = horizon_count();
  const OriginFits fits = fit_origin(r);
  for (int k = 0; k < K; ++k) {
    const std::size_t at = i * std::size_t(K) + std::size_t(k);
    w.rows[at] = forecast_row(f, fits, r, k, g);
    if (!settings_.level_model.empty())
      w.validation[at] = {r, g, k, calibrated_validation(fits, r, k)};
  }
  if (judge_by_final()) w.finals[i] = final_forecast(fits, r, g);
}

// The forecast of run r's first validation point at or after horizon k, its interval calibrated
// online by the realised coverage of the validation forecasts made before (factor 1 until targets
// are known).
ValidationForecast CurveStudy::calibrated_validation(const OriginFits& fits, int r, int k) const {
  ValidationForecast f = forecast_validation(runs_[std::size_t(r)], fits.validation, level_model(r),
                                             fits.level, settings_.horizons[std::size_t(k)]);
  if (f.val_step < 0) return f;
  f.raw_lo = f.lo, f.raw_hi = f.hi;
  const Interval iv = validation_calibration_.apply(k, f.lo, f.mid, f.hi);
  f.lo = iv.lo, f.hi = iv.hi;
  return f;
}

// The fits of run r at the current origin that every horizon shares.
OriginFits CurveStudy::fit_origin(int r) const {
  const Curve& run = runs_[std::size_t(r)];
  const int n = next_[std::size_t(r)];
  OriginFits fits{fit_schedule_law(run.loss, areas_[std::size_t(r)], n),
                  fit_power_history(run.steps, run.loss, n),
                  level_history(run.steps, run.loss, n),
                  {}};
  if (!settings_.level_model.empty())  // validation forecasts need the model
    fits.validation = validation_history(validation_curves_[std::size_t(r)], fits.level.t);
  return fits;
}

// The learned forecast of run r's log loss at its group's last step (the sweep's planned end). A
// run at that step already: its current level, exactly.
LevelForecast CurveStudy::final_forecast(const OriginFits& fits, int r, long long g) const {
  const Curve& run = runs_[std::size_t(r)];
  const long long end = group_end_[std::size_t(group_[std::size_t(r)])];
  const LevelModel& m = settings_.final_model.empty() ? level_model(r) : settings_.final_model;
  if (settings_.stop_on_validation)
    return final_validation(run, fits.validation, m, fits.level, end);
  return level_forecast_ahead(m, fits.level, run.steps, run.lr, end - g);
}

// The lowest and second-lowest level of every group (of the runs pushed so far): the forecast
// final median of the runs at this origin (`marked`, `finals`) when the stop list judges by it,
// else, and for the runs not at this origin, the current log loss.
GroupLeaders CurveStudy::group_leaders(const std::vector<int>& marked,
                                       const std::vector<LevelForecast>& finals,
                                       long long g) const {
  std::vector<double> level(runs_.size(), kNaN);
  for (int q = 0; q < runs_count(); ++q)
    if (next_[std::size_t(q)] > 0) level[std::size_t(q)] = current_level(q, g);
  if (judge_by_final())
    for (std::size_t i = 0; i < marked.size(); ++i) level[std::size_t(marked[i])] = finals[i].mid;
  GroupLeaders l(group_end_.size());
  for (int q = 0; q < runs_count(); ++q)
    if (next_[std::size_t(q)] > 0)
      l[std::size_t(group_[std::size_t(q)])].add(q, level[std::size_t(q)]);
  for (Leaders& g : l) g.finish();
  return l;
}

// The forecast final medians and current levels of the runs forecast at this origin, per group:
// the runs that the rule both ranks a judged run among (a run already at its end, or diverged, has
// no forecast and is left out of both).
ForecastRanks CurveStudy::forecast_ranks(const std::vector<int>& marked,
                                         const std::vector<LevelForecast>& finals,
                                         long long g) const {
  ForecastRanks ranks{GroupLeaders(group_end_.size()), GroupLeaders(group_end_.size())};
  for (std::size_t i = 0; i < marked.size(); ++i) {
    const int q = marked[i];
    if (std::isnan(finals[i].mid)) continue;
    const std::size_t gi = std::size_t(group_[std::size_t(q)]);
    ranks.finals[gi].add(q, finals[i].mid);
    ranks.levels[gi].add(q, current_level(q, g));
  }
  for (Leaders& l : ranks.finals) l.finish();
  for (Leaders& l : ranks.levels) l.finish();
  return ranks;
}

void Leaders::add(int run, double level) {
  if (std::isnan(level)) return;
  levels.push_back(level);
  if (best_run < 0 || level < best) {
    second = best, second_run = best_run;
    best = level, best_run = run;
  } else if (std::isnan(second) || level < second) {
    second = level, second_run = run;
  }
}

void Leaders::finish() {
  std::sort(levels.begin(), levels.end());
}

std::size_t Leaders::place_of(double own) const {
  const auto own_at = std::lower_bound(levels.begin(), levels.end(), own);
  if (levels.size() < 2 || own_at == levels.end() || *own_at != own) return levels.size();
  return std::size_t(own_at - levels.begin());
}

double Leaders::median_other(double own) const {
  const std::size_t p = place_of(own);
  if (p == levels.size()) return ForecastRow::kNaN;
  const std::size_t n = levels.size() - 1;
  return n % 2 == 1 ? other(n / 2, p) : 0.5 * (other(n / 2 - 1, p) + other(n / 2, p));
}

double Leaders::quantile_other(double own, double q) const {
  const std::size_t p = place_of(own);
  if (p == levels.size()) return ForecastRow::kNaN;
  const double h = q * double(levels.size() - 2);  // position among the m - 1 others
  const std::size_t lo = std::size_t(std::floor(h));
  const std::size_t hi = std::min(lo + 1, levels.size() - 2);
  return other(lo, p) + (h - double(lo)) * (other(hi, p) - other(lo, p));
}

// The ensemble's forecast of the marked runs (timed): this process rolls out those of `mine` and
// gathers the others'.
CurveForecast CurveStudy::ensemble_forecast(const std::vector<int>& marked, MarkedRange mine) {
  for (std::size_t i = 0; i < marked.size(); ++i)
    host_origin_(marked[i]) = i >= mine.lo && i < mine.hi ? 1 : 0;
  const int origin_runs = int(mine.hi - mine.lo);
  Kokkos::deep_copy(origin_active_, host_origin_);
  encoder_.extract_loss_state(history_, state_.loss_states);
  const Encoder::Normalizer* norm = encoder_.normalizer();
  state_.norm_mean = norm ? norm->center : View2<real>("hpt::no_norm", runs_count(), kFeatures);
  state_.norm_inv_std = norm ? norm->inv_std : state_.norm_mean;
  CurveState at_origin = state_;
  at_origin.active = origin_active_;
  Kokkos::Timer forecast_timer;
  CurveForecast f = forecaster_.forecast(at_origin);
  timings_.forecast_seconds += forecast_timer.seconds();
  timings_.member_steps += forecaster_.member_steps_per_forecast(origin_runs);
  timings_.rollout_paths = std::max<long long>(
      timings_.rollout_paths, (long long)origin_runs * settings_.scenarios * dynamics_.members());
  share_ensemble_forecast(comm_, marked, mine, f);
  return f;
}

// Run r at origin g, horizon index k: the calibrated ensemble forecast, the baselines with their
// intervals from their own past errors, and the target (NaN unless the run has its window).
ForecastRow CurveStudy::forecast_row(const CurveForecast& f, const OriginFits& fits, int r, int k,
                                     long long g) const {
  const Curve& run = runs_[std::size_t(r)];
  const int n = next_[std::size_t(r)];
  const int K = horizon_count();
  const int h = settings_.horizons[std::size_t(k)];
  const std::size_t at = std::size_t(r * K + k);
  ForecastRow row;
  row.run = r;
  row.origin = g;
  row.k = k;
  if (settings_.ensemble) {
    row.mean = f.mean[at];
    row.raw_q05 = f.q05[at];
    row.raw_q95 = f.q95[at];
    const auto iv = calibration_.apply(k, f.q05[at], f.q50[at], f.q95[at]);
    row.q05 = iv.lo;
    row.q50 = iv.mid;
    row.q95 = iv.hi;
  }
  row.base[0] = forecast_last(run.loss, n);
  const LogLinLine loglin = fit_loglin(run.steps, run.loss, n);
  row.base[1] = loglin.at(double(h));
  row.loglin_t = loglin.t_stat;
  row.base[2] = forecast_power(fits.power, run.steps, run.loss, n, h);
  row.power_guard = power_guard(run, fits.power, n, h);
  row.base[kLawSlot] =
      forecast_law(run.steps, run.loss, run.lr, areas_[std::size_t(r)], fits.law, n, h);
  row.base[kLearnedSlot] = row.base[0];
  LevelForecast learned;
  if (!settings_.level_model.empty()) {
    learned = level_forecast(learned_model(r), level_features(fits.level, run.steps, run.lr, h));
    if (anchored_between_logs(run, h)) {
      const int next = int(run.logged_every);
      const LevelForecast at_next =
          level_forecast(learned_model(r), level_features(fits.level, run.steps, run.lr, next));
      learned = anchor_to_logged(run, n, h, learned, at_next);
    }
    row.base[kLearnedSlot] = learned.mid;
  }
  combine_with_intervals(row, learned);
  row.target = target_log_loss(run.steps, run.loss, g, h);
  return row;
}

// The baselines' intervals from their own past errors, the learned one from the pretrained
// quantiles, then the combined forecast (its guards held inside the learned interval); with a
// model its interval is set once the origin's rows are all known (calibrate_combined).
void CurveStudy::combine_with_intervals(ForecastRow& row, const LevelForecast& learned) const {
  const int K = horizon_count();
  const auto empirical_interval = [&](int b) {
    const auto& e = base_errors_[std::size_t(b * K + row.k)];
    row.base_lo[b] = row.base[b] + e.quantile(0.05);
    row.base_hi[b] = row.base[b] + e.quantile(0.95);
  };
  for (int b = 0; b < kBaselines; ++b)
    if (b != kCombinedSlot) empirical_interval(b);
  const bool has_model = !settings_.level_model.empty();
  if (has_model) {  // an interval from the first origin
    row.base_lo[kLearnedSlot] = learned.lo;
    row.base_hi[kLearnedSlot] = learned.hi;
  }
  row.base[kCombinedSlot] = combination_.combine(row.run, row.k, experts_of(row, guard_hold(row)));
  if (!has_model) empirical_interval(kCombinedSlot);
}

// The combined forecasts of one origin (every process holds them all, in run order): the learned
// interval moved with each, its halves floored at the median half of the origin's raw intervals of
// that horizon, widened by the horizon's online calibration.
void CurveStudy::calibrate_combined(std::vector<ForecastRow>& rows) const {
  if (settings_.level_model.empty()) return;
  for (int k = 0; k < horizon_count(); ++k) {
    std::vector<Interval> raws;
    for (const ForecastRow& row : rows)
      if (row.k == k) raws.push_back(combined_raw_interval(row));
    const double floor = median_half_width(raws);
    for (ForecastRow& row : rows) {
      if (row.k != k) continue;
      const Interval raw = with_floored_halves(combined_raw_interval(row), floor);
      row.combined_raw_lo = raw.lo;
      row.combined_raw_hi = raw.hi;
      const Interval iv = combined_calibration_.apply(k, raw.lo, raw.mid, raw.hi);
      row.base_lo[kCombinedSlot] = iv.lo;
      row.base_hi[kCombinedSlot] = iv.hi;
    }
  }
}

// Probability of beating the best other run of its group (runs of different problems are never
// compared). With forecast.stop_by = learned and a pretrained model: that the run's final log loss
// (`final`, the learned two-piece normal at its group's last step) lies below the lowest forecast
// final median of the others, or with forecast.stop_against = interval below that run's forecast
// (a run not at this origin counts with its current level, a point). Else: the fraction of the
// ensemble's calibrated sample paths at the largest horizon below the others' lowest current log
// loss (log mean of the newest 10).
OriginRow CurveStudy::origin_row(const CurveForecast& f, int r, long long g,
                                 const std::vector<LevelForecast>& finals,
                                 const GroupLeaders& leaders, const ForecastRanks& ranks) const {
  const int K = horizon_count();
  const std::size_t gi = std::size_t(group_[std::size_t(r)]);
  OriginRow o;
  o.run = r;
  o.origin = g;
  o.best_other = leaders[gi].best_other(r);
  if (std::isnan(o.best_other)) return o;
  if (judge_by_final()) {
    const LevelForecast& final = finals[std::size_t(r)];
    o.final_mid = final.mid, o.final_lo = final.lo, o.final_hi = final.hi;
    o.others_median = leaders[gi].median_other(final.mid);
    o.others_final_quantile = ranks.finals[gi].quantile_other(final.mid, settings_.stop_quantile);
    o.level = current_level(r, g);
    o.others_level_quantile = ranks.levels[gi].quantile_other(o.level, settings_.stop_quantile);
    const LevelForecast& other = finals[std::size_t(leaders[gi].best_other_run(r))];
    const LevelForecast against =
        std::isnan(other.mid) ? LevelForecast{o.best_other, kNaN, kNaN} : other;
    o.beat_probability = beat_probability(settings_.stop_against, final, against);
    return o;
  }
  if (!settings_.ensemble) return o;  // no forecaster to judge by: never stopped
  const std::size_t at = std::size_t(r * K + K - 1);
  const double w = calibration_.width_factor(K - 1), mid = f.q50[at];
  int below = 0;
  for (int p = 0; p < f.paths; ++p) {
    const double l = f.paths_last[std::size_t(r) * std::size_t(f.paths) + std::size_t(p)];
    below += (mid + w * (l - mid)) < o.best_other;
  }
  o.beat_probability = double(below) / double(f.paths);
  return o;
}

// The level a run has at step g for the stop list: its current log loss, or with
// forecast.stop_on = validation its validation level.
double CurveStudy::current_level(int r, long long g) const {
  return settings_.stop_on_validation ? validation_level(runs_[std::size_t(r)], g)
                                      : current_log_loss(r);
}

// Log mean of the newest 10 losses of run r pushed so far, up to its newest logged one.
double CurveStudy::current_log_loss(int r) const {
  const int n = logged_upto(runs_[std::size_t(r)], next_[std::size_t(r)]);
  return n == 0 ? kNaN : forecast_last(runs_[std::size_t(r)].loss, n);
}

HorizonScores score_rows(const std::vector<ForecastRow>& rows, int horizons) {
  const int K = horizons, F = kForecasters;
  std::vector<double> err_sum(std::size_t(F * K), 0), cov_in(std::size_t(F * K), 0),
      width_sum(std::size_t(F * K), 0);
  std::vector<long> err_n(std::size_t(F * K), 0), cov_n(std::size_t(F * K), 0);
  for (const ForecastRow& row : rows) {
    if (std::isnan(row.target)) continue;
    for (int fi = 0; fi < F; ++fi) {
      const double point = fi == 0 ? row.mean : row.base[fi - 1];
      if (std::isnan(point)) continue;  // hpt with forecast.ensemble = off
      const int inside = fi == 0 ? row.inside : row.base_inside[fi - 1];
      const std::size_t at = std::size_t(fi * K + row.k);
      err_sum[at] += std::fabs(point - row.target);
      err_n[at] += 1;
      if (inside >= 0) {
        cov_in[at] += inside;
        cov_n[at] += 1;
        width_sum[at] += fi == 0 ? row.q95 - row.q05 : row.base_hi[fi - 1] - row.base_lo[fi - 1];
      }
    }
  }
  HorizonScores s;
  s.horizons = K;
  s.targets = err_n;
  for (std::size_t at = 0; at < err_n.size(); ++at) {
    s.mean_error.push_back(err_n[at] ? err_sum[at] / double(err_n[at]) : kNaN);
    s.coverage.push_back(cov_n[at] ? cov_in[at] / double(cov_n[at]) : kNaN);
    s.mean_width.push_back(cov_n[at] ? width_sum[at] / double(cov_n[at]) : kNaN);
  }
  return s;
}

ValidationScores score_validation(const std::vector<ValidationRow>& rows, int horizons) {
  ValidationScores s;
  s.targets.assign(std::size_t(horizons), 0);
  std::vector<double> learned(std::size_t(horizons), 0), last(std::size_t(horizons), 0),
      inside(std::size_t(horizons), 0);
  for (const ValidationRow& v : rows) {
    if (std::isnan(v.f.target)) continue;
    const std::size_t k = std::size_t(v.k);
    s.targets[k] += 1;
    learned[k] += std::fabs(v.f.mid - v.f.target);
    last[k] += std::fabs(v.f.level - v.f.target);
    inside[k] += (v.f.target >= v.f.lo && v.f.target <= v.f.hi) ? 1 : 0;
  }
  for (std::size_t k = 0; k < std::size_t(horizons); ++k) {
    const double n = double(s.targets[k]);
    s.learned_error.push_back(n > 0 ? learned[k] / n : kNaN);
    s.last_error.push_back(n > 0 ? last[k] / n : kNaN);
    s.coverage.push_back(n > 0 ? inside[k] / n : kNaN);
  }
  return s;
}

StopList judge_stops(const std::vector<Curve>& runs, const std::vector<OriginRow>& origins,
                     double stop_at, double stop_confidence, bool by_validation, StopRule rule,
                     double quantile) {
  const std::size_t R = runs.size();
  StopList s;
  s.stop_at = stop_at;
  s.below_probability = 1.0 - stop_confidence;
  s.rule = rule;
  s.quantile = quantile;
  s.judged.assign(R, StopEvidence{});
  s.final_log_loss.assign(R, 0.0);
  s.latest_beat.assign(R, kNaN);
  s.stop_origin.assign(R, -1);
  s.steps_saved.assign(R, 0);
  s.stopped.assign(R, 0);
  for (int r = 0; r < int(R); ++r) {
    judge_run(runs[std::size_t(r)], r, origins, by_validation, s);
    if (s.final_log_loss[std::size_t(r)] < s.final_log_loss[std::size_t(s.best_run)])
      s.best_run = r;
  }
  for (std::size_t r = 0; r < R; ++r) {
    s.total_steps_saved += s.steps_saved[r];
    s.stopped_count += s.stopped[r];
  }
  // Every group's best run must be kept (one group when the file names none).
  std::map<std::string, int> best_of_group;
  for (int r = 0; r < int(R); ++r) {
    auto [it, fresh] = best_of_group.emplace(runs[std::size_t(r)].group, r);
    if (!fresh && s.final_log_loss[std::size_t(r)] < s.final_log_loss[std::size_t(it->second)])
      it->second = r;
  }
  for (const auto& [group, r] : best_of_group)
    s.best_run_kept = s.best_run_kept && s.stopped[std::size_t(r)] == 0;
  return s;
}

}  // namespace hpt::forecast
