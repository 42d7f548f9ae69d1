#pragma once
// The curve study of run.mode = forecast: the loss curves of a sweep of training runs replayed step
// by step together; at every origin the shared RSSM ensemble (forecast/curve_forecaster.hpp) and
// three baselines (forecast/baselines.hpp) forecast each run at every horizon, the forecasts are
// scored once their targets are known, the ensemble's intervals calibrated online, and a stop list
// judges which runs could have been stopped early. io/curve_study_file writes the result.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "core/communicator.hpp"
#include "forecast/stop_rule.hpp"
#include "forecast/adaptive_conformal.hpp"
#include "forecast/baselines.hpp"
#include "forecast/curve.hpp"
#include "forecast/curve_forecaster.hpp"
#include "forecast/forecast_combination.hpp"
#include "forecast/level_finetune.hpp"
#include "forecast/level_model.hpp"
#include "forecast/schedule_law.hpp"
#include "forecast/validation_forecast.hpp"
#include "physics-style-modules/dynamics/rssm_online.hpp"
#include "physics-style-modules/encoder/encoder.hpp"

namespace hpt::forecast {

// The forecasters beside hpt's ensemble: three simple baselines, the schedule-aware law, the
// pretrained level forecaster (forecast/level_model.hpp), and the combined forecast, that
// forecaster guarded run by run by `last`, `loglin` and `power` (the last slot,
// forecast/forecast_combination.hpp, forecast/power_guard.hpp).
constexpr int kBaselines = 6;
constexpr int kLawSlot = 3, kLearnedSlot = 4, kCombinedSlot = 5;
constexpr int kForecasters = 1 + kBaselines;  // hpt, then the others
inline constexpr const char* kBaselineNames[kBaselines] = {"last", "loglin",  "power",
                                                           "law",  "learned", "combined"};
inline constexpr const char* kForecasterNames[kForecasters] = {"hpt", "last",    "loglin",  "power",
                                                               "law", "learned", "combined"};
constexpr int kMinOriginEntries = 10;   // a run is forecast once it has this many steps
constexpr double kProgressSeconds = 5;  // longest wall time between two progress lines

// Where the combined forecast holds its guards inside the learned 90 % interval
// (forecast.guard_clamp): on every run; on runs of at least 500 steps only; or as kLength, except
// that a short run's `loglin` is held where its slope is not significant.
enum class GuardClamp { kAlways, kLength, kTrend };

// Which guards a combined forecast holds inside the learned interval: `last` and `power`, `loglin`.
struct GuardHold {
  bool others = false, loglin = false;
};

// What the study computes with (forecast_options.hpp reads it from the deck).
struct CurveStudySettings {
  std::vector<int> horizons;  // forecast.horizons
  long long every = 10;       // forecast.every: origins at steps divisible by this
  int scenarios = 32;         // forecast.scenarios
  int train_runs = 4;         // forecast.train_runs
  CalibrationRule calibration = CalibrationRule::kQuantile;  // forecast.calibration
  double calibration_rate = 0.05;                            // forecast.calibration_rate
  int calibration_window = 200;                              // forecast.calibration_window
  double stop_at = 0.25;                                     // forecast.stop_at
  double stop_confidence = 0.9;                              // forecast.stop_confidence
  bool stop_by_learned = true;  // forecast.stop_by = learned (else hpt's ensemble paths)
  StopRule stop_rule = StopRule::kProbability;        // forecast.stop_rule
  double stop_quantile = 0.4;                         // forecast.stop_quantile (rule both)
  StopAgainst stop_against = StopAgainst::kInterval;  // forecast.stop_against
  bool ensemble = true;                          // forecast.ensemble: off leaves the hpt column NaN
  bool stop_on_validation = false;               // forecast.stop_on = validation (else train)
  bool combination_by_length = true;             // forecast.combination_clock = length (else steps)
  GuardClamp guard_clamp = GuardClamp::kAlways;  // forecast.guard_clamp
  std::uint64_t seed = 1;                        // run.seed
  std::size_t print_every = 100;                 // run.print_every
  RssmTrainOptions training;                     // [dynamics] online training
  LevelModel level_model;     // forecast.pretrained; empty: `learned` repeats `last`
  LevelModel sparse_model;    // forecast.pretrained_sparse; empty: level_model for all
  LevelModel final_model;     // forecast.final_model; empty: level_model to the run's end
  FinetuneSettings finetune;  // forecast.finetune*: refits of level_model per group
};

// One scored forecast (run, origin, horizon index k) of hpt and the baselines. Log losses.
struct ForecastRow {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  int run = 0;
  long long origin = 0;
  int k = 0;
  double mean = kNaN, q05 = kNaN, q50 = kNaN, q95 = kNaN, raw_q05 = kNaN, raw_q95 = kNaN;
  double target = kNaN;
  int inside = -1;  // -1: target unknown
  double base[kBaselines] = {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  double base_lo[kBaselines] = {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  double base_hi[kBaselines] = {kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  int base_inside[kBaselines] = {-1, -1, -1, -1, -1, -1};  // -1: target or interval unknown
  // `power` where its fit found a decay (b > 0), NaN where it did not (a flat law, or no fit): the
  // combined forecast's fourth expert.
  double power_guard = kNaN;
  // `loglin`'s slope over its standard error at this origin (LogLinLine::t_stat).
  double loglin_t = kNaN;
  // The raw interval the combined forecast's calibration widened: combined_raw_interval with its
  // halves floored at the median half of the origin's raw intervals of this horizon
  // (forecast/sweep_half_floor.hpp).
  double combined_raw_lo = kNaN, combined_raw_hi = kNaN;
};

// A forecast of a validation point (run, origin, horizon index k) by the learned change.
struct ValidationRow {
  int run = 0;
  long long origin = 0;
  int k = 0;
  ValidationForecast f;
};

// Per horizon index k: targets, mean |error| of the learned validation forecast and of the
// validation level (`last`), and the learned interval's coverage.
struct ValidationScores {
  std::vector<long> targets;
  std::vector<double> learned_error, last_error, coverage;
};
ValidationScores score_validation(const std::vector<ValidationRow>& rows, int horizons);

// A run at an origin: its probability of beating the best other run.
struct OriginRow {
  int run = 0;
  long long origin = 0;
  // The best other run's level the run must beat: with forecast.stop_by = learned the lowest
  // forecast final log loss (median) of the other runs of its group, else their lowest current one.
  double best_other = ForecastRow::kNaN;
  double beat_probability = ForecastRow::kNaN;
  // The median of the other runs' levels that best_other is the lowest of.
  double others_median = ForecastRow::kNaN;
  // stop_by = learned: the run's forecast log loss at its group's last step, median and 90 %.
  double final_mid = ForecastRow::kNaN, final_lo = ForecastRow::kNaN, final_hi = ForecastRow::kNaN;
  // forecast.stop_quantile's quantile of the forecast final medians of the other runs forecast at
  // this origin; the run's current level (the stop list's: training or validation) and that
  // quantile of those runs' current levels (what the rule both compares).
  double others_final_quantile = ForecastRow::kNaN;
  double level = ForecastRow::kNaN, others_level_quantile = ForecastRow::kNaN;
};

// Mean |error|, 90 % coverage and the 90 % interval's mean width (log units) of every forecaster
// (index fi: kForecasterNames) per horizon index k, entry fi * K + k: errors over the rows whose
// target is known, coverage and width over those whose interval is defined too (hpt: always;
// baselines: from their 10th realised error on).
struct HorizonScores {
  int horizons = 0;
  std::vector<long> targets;
  std::vector<double> mean_error;  // NaN without targets
  std::vector<double> coverage;    // NaN without a defined interval
  std::vector<double> mean_width;  // NaN without a defined interval
  std::size_t at(int fi, int k) const { return std::size_t(fi * horizons + k); }
};

// Each run judged at its latest origin at or before entry stop_at * length: stopped when its
// probability of beating the best other run is below 1 - stop_confidence. Per run r unless named.
// final_log_loss: the run's last training level, or with forecast.stop_on = validation its last
// validation level.
struct StopList {
  double stop_at = 0, below_probability = 0;
  StopRule rule = StopRule::kProbability;
  double quantile = 0;  // forecast.stop_quantile (rule both)
  // judged: what the verdict read at the judging origin (all NaN without one).
  std::vector<double> final_log_loss, latest_beat;
  std::vector<StopEvidence> judged;
  std::vector<long long> stop_origin, steps_saved;  // stop_origin -1: no origin to judge at
  std::vector<int> stopped;
  int best_run = 0;           // lowest final log loss of all runs
  bool best_run_kept = true;  // the best run of every group was not stopped
  long long total_steps_saved = 0, stopped_count = 0;
};

struct CurveStudyTimings {
  double seconds = 0;           // the whole replay
  double forecast_seconds = 0;  // of which the ensemble's forecasts
  double train_seconds = 0;     // and its online training
  double finetune_seconds = 0;  // and the learned model's fine-tuning (forecast.finetune)
  double member_steps = 0;      // rollout member-steps of all forecasts
  long long rollout_paths = 0;  // most paths of one forecast
  long long run_steps = 0;      // entries of all runs replayed
  double run_steps_per_second() const { return seconds > 0 ? run_steps / seconds : 0.0; }
  double member_steps_per_second() const { return member_steps / std::max(forecast_seconds, 1e-9); }
};

struct CurveStudyResult {
  std::vector<int> horizons;
  long long every = 0;
  int train_runs = 0;
  std::size_t steps = 0;                  // distinct steps of all runs, replayed in order
  long long training_updates = 0;         // BPTT updates of the shared ensemble
  std::vector<ForecastRow> rows;          // in the order the forecasts were made
  std::vector<ValidationRow> validation;  // runs with validation losses (learned model only)
  ValidationScores validation_scores;
  std::vector<OriginRow> origins;
  HorizonScores scores;
  std::vector<double> width_factor;  // hpt's calibrated width factor per horizon at the end
  StopList stop;
  CurveStudyTimings timings;
  double rollout_gflops = 0;  // the rollouts' GRU and head flops over the forecasts' time
  std::string beat_method;    // how OriginRow::beat_probability was computed, in words
  long long finetune_refits = 0, finetune_samples = 0;  // group refits of the learned model
};

// Where the replay is, for progress lines.
struct ReplayProgress {
  long long step = 0;
  std::size_t walked = 0, steps = 0;  // steps replayed of all
  double seconds = 0;
  long long run_steps = 0;
};

// The fits of one run at one origin that every horizon shares.
struct OriginFits {
  ScheduleLaw law;
  PowerLaw power;
  LevelHistory level;
  ValidationHistory validation;  // of the run's validation curve
};

// The lowest level of a group, its run, and the second lowest (the best other run of the leader),
// from the runs added in run order (the stop list of forecast mode and of a live watch).
struct Leaders {
  double best = ForecastRow::kNaN, second = ForecastRow::kNaN;
  int best_run = -1, second_run = -1;
  std::vector<double> levels;  // every level added, sorted by finish()
  void add(int run, double level);
  void finish();
  // The level run r must beat: the lowest of the others.
  double best_other(int r) const { return best_run == r ? second : best; }
  int best_other_run(int r) const { return best_run == r ? second_run : best_run; }
  // The median of the levels without one of them equal to `own` (after finish(); NaN when no
  // other level is left).
  double median_other(double own) const;
  // The p quantile (linear between order statistics, as numpy's default) of the levels without
  // one equal to `own` (after finish(); NaN when no other level is left).
  double quantile_other(double own, double p) const;

 private:
  // own's index among the sorted levels; levels.size() when it is not one of them or no other
  // level is left.
  std::size_t place_of(double own) const;
  // Element i of the levels without the one at `place`.
  double other(std::size_t i, std::size_t place) const { return levels[i < place ? i : i + 1]; }
};
using GroupLeaders = std::vector<Leaders>;  // per group

// Per group, the forecast final medians and the current levels of the same runs.
struct ForecastRanks {
  GroupLeaders finals, levels;
};

// What the runs of one origin produce (made on the host's threads, entry per marked run and
// horizon).
struct OriginWork {
  std::vector<int> marked;
  std::vector<ForecastRow> rows;
  std::vector<ValidationRow> validation;
  std::vector<LevelForecast> finals;
};

struct MarkedRange;  // the marked runs of one process (forecast/origin_share.hpp)

class CurveStudy {
 public:
  // `runs`, `dynamics` (initialised or loaded) and `encoder` must outlive the study. Over several
  // processes of `comm` each forecasts its block of runs (forecast/origin_share.hpp) and all end
  // with the same result.
  CurveStudy(const std::vector<Curve>& runs, const CurveStudySettings& settings,
             RssmDynamics& dynamics, Encoder& encoder, const Communicator& comm);
  // Replays every run, then scores and judges; `progress` is called every run.print_every steps
  // and at the last.
  CurveStudyResult run(const std::function<void(const ReplayProgress&)>& progress);

 private:
  int runs_count() const { return int(runs_.size()); }
  // Which guards the combined forecast holds inside the learned interval for `row`.
  GuardHold guard_hold(const ForecastRow& row) const;
  int horizon_count() const { return int(settings_.horizons.size()); }
  void replay(const std::function<void(const ReplayProgress&)>& progress);
  void push_step(long long g);
  void observe_and_train();
  void score_due(long long g);
  void score_due_validation(long long g);
  void forecast_at_origin(long long g);
  CurveForecast ensemble_forecast(const std::vector<int>& marked, MarkedRange mine);
  int mark_origin_runs();
  OriginFits fit_origin(int r) const;
  bool judge_by_final() const {
    return settings_.stop_by_learned && !settings_.level_model.empty();
  }
  LevelForecast final_forecast(const OriginFits& fits, int r, long long g) const;
  ValidationForecast calibrated_validation(const OriginFits& fits, int r, int k) const;
  GroupLeaders group_leaders(const std::vector<int>& marked,
                             const std::vector<LevelForecast>& finals, long long g) const;
  void forecast_run(const CurveForecast& f, long long g, std::size_t i, OriginWork& w) const;
  void combine_with_intervals(ForecastRow& row, const LevelForecast& learned) const;
  void calibrate_combined(std::vector<ForecastRow>& rows) const;
  ForecastRow forecast_row(const CurveForecast& f, const OriginFits& fits, int r, int k,
                           long long g) const;
  // `finals`: the final forecast of every run at this origin, by run (NaN for the others).
  ForecastRanks forecast_ranks(const std::vector<int>& marked,
                               const std::vector<LevelForecast>& finals, long long g) const;
  OriginRow origin_row(const CurveForecast& f, int r, long long g,
                       const std::vector<LevelForecast>& finals, const GroupLeaders& leaders,
                       const ForecastRanks& ranks) const;
  double current_log_loss(int r) const;
  // Run r's learned model: its group's, fine-tuned so far, or the pretrained one.
  const LevelModel& level_model(int r) const { return finetuner_.model(group_[std::size_t(r)]); }
  // The model of run r's `learned` forecast: the sparse runs' where the run was read step by step
  // from a sparser log (never fine-tuned: finetuning refuses such runs) and one is loaded.
  const LevelModel& learned_model(int r) const {
    const bool sparse = !runs_[std::size_t(r)].logged.empty();
    return sparse && !settings_.sparse_model.empty() ? settings_.sparse_model : level_model(r);
  }
  double current_level(int r, long long g) const;  // the stop list's: training or validation

  const std::vector<Curve>& runs_;
  CurveStudySettings settings_;
  RssmDynamics& dynamics_;
  Encoder& encoder_;
  RssmCurveForecaster forecaster_;
  AdaptiveConformal calibration_;
  AdaptiveConformal combined_calibration_;    // of the combined forecast's interval
  AdaptiveConformal validation_calibration_;  // of the validation forecasts' intervals
  std::vector<EmpiricalErrors> base_errors_;  // baseline b, horizon k: entry b * K + k
  std::vector<int> group_;                    // run -> index of its group
  std::vector<long long> group_end_;          // group -> last step of its longest run
  std::vector<ScheduleAreas> areas_;          // run -> S1, S2 of the law at every entry
  std::vector<Curve> validation_curves_;      // run -> its validation curve (empty: too few)
  ForecastCombination combination_;
  LevelFinetuner finetuner_;
  Communicator comm_;
  int first_run_ = 0, end_run_ = 0;  // the runs this process forecasts

  Encoder::History history_;
  CurveState state_;
  View1<real>::host_mirror_type host_log_loss_;
  View1<int> origin_active_;
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> records_;
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace>::host_mirror_type host_records_;
  View1<int>::host_mirror_type host_active_, host_origin_;

  std::vector<long long> grid_;  // every step of any run, in order: all runs walk forward together
  std::vector<ForecastRow> rows_;
  std::vector<ValidationRow> validation_;
  std::vector<OriginRow> origins_;
  std::multimap<long long, std::size_t> due_;  // step at which a row's target is known -> row
  std::multimap<long long, std::size_t> validation_due_;  // validation point's step -> its row
  std::vector<int> next_;                                 // entries of run r pushed so far
  CurveStudyTimings timings_;
};

// The scores of `rows` per forecaster and horizon (see HorizonScores).
HorizonScores score_rows(const std::vector<ForecastRow>& rows, int horizons);

// The combined forecast's raw interval (before the online calibration): the learned interval moved
// with the combined forecast, a half without width given the other's (or `last`'s) width.
Interval combined_raw_interval(const ForecastRow& row);

// The stop list of `runs` from their origins' beat probabilities.
StopList judge_stops(const std::vector<Curve>& runs, const std::vector<OriginRow>& origins,
                     double stop_at, double stop_confidence, bool by_validation = false,
                     StopRule rule = StopRule::kProbability, double quantile = 0.4);

}  // namespace hpt::forecast
