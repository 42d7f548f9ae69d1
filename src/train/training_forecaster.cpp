#include "train/training_forecaster.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "forecast/baselines.hpp"
#include "forecast/level_features.hpp"

namespace hpt::train {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
// The learned forecaster's history: the newest this many steps' losses (a ring by step).
constexpr std::int64_t kLearnedHistory = 1 << 16;
enum PendingColumn : int {
  kOrigin = 0,
  kHorizonIndex,
  kMean,
  kRawQ05,
  kQ50,
  kRawQ95,
  kWidth,
  kColumns
};

// Quantile q of sorted values (linear interpolation between order statistics).
double quantile(const std::vector<double>& sorted, double q) {
  const double pos = q * double(sorted.size() - 1);
  const std::size_t i = std::size_t(pos);
  const double f = pos - double(i);
  return i + 1 < sorted.size() ? sorted[i] * (1 - f) + sorted[i + 1] * f : sorted[i];
}

}  // namespace

TrainingForecaster::TrainingForecaster(RssmDynamics& dynamics, Encoder& encoder,
                                       const TrainingForecastSettings& settings)
    : dynamics_(dynamics), encoder_(encoder), settings_(settings) {
  HPT_REQUIRE(!settings_.horizons.empty() && settings_.every >= 1,
              "TrainingForecaster: needs horizons and an origin spacing");
  const int K = int(settings_.horizons.size());
  const int max_h = *std::max_element(settings_.horizons.begin(), settings_.horizons.end());
  rollout_.horizon = max_h + forecast::kTargetAfter;
  rollout_.scenarios = settings_.scenarios;
  rollout_.seed = settings_.seed;
  rollout_.feature_update = encoder.feature_update();
  rollout_.clamp = encoder.clamp();
  out_ = RolloutOutputs<real>(settings_.scenarios, dynamics.members(), dynamics.hidden(),
                              rollout_.horizon);
  loss_states_ = View1<LossState<real>>("hpt::forecaster_loss_state", 1);
  loss_log_ = Kokkos::View<double*, Kokkos::HostSpace>("hpt::forecaster_loss_log",
                                                       std::size_t(rollout_.horizon + 1));
  const int pending = K * (rollout_.horizon / settings_.every + 2);
  pending_ = Kokkos::View<double**, Kokkos::HostSpace>("hpt::forecaster_pending",
                                                       std::size_t(pending), std::size_t(kColumns));
  for (int i = 0; i < pending; ++i) pending_(i, kOrigin) = -1;
  Kokkos::deep_copy(loss_log_, kNaN);
  const forecast::AdaptiveConformal fresh = fresh_calibration();
  calibration_state_ = Kokkos::View<double**, Kokkos::HostSpace>(
      "hpt::forecaster_calibration", std::size_t(K), std::size_t(fresh.state_size()));
  store(fresh);
  error_sums_ =
      Kokkos::View<double*, Kokkos::HostSpace>("hpt::forecaster_error_sums", std::size_t(K));
  if (settings_.learned()) {
    step_losses_ = Kokkos::View<double*, Kokkos::HostSpace>("hpt::forecaster_step_losses",
                                                            std::size_t(kLearnedHistory));
    Kokkos::deep_copy(step_losses_, kNaN);
    learned_seen_ = Kokkos::View<double*, Kokkos::HostSpace>("hpt::forecaster_learned_seen", 1);
  }
}

forecast::AdaptiveConformal TrainingForecaster::fresh_calibration() const {
  return forecast::AdaptiveConformal(int(settings_.horizons.size()), settings_.calibration_rule,
                                     0.90, settings_.calibration_rate,
                                     settings_.calibration_window);
}

forecast::AdaptiveConformal TrainingForecaster::calibration() const {
  forecast::AdaptiveConformal c = fresh_calibration();
  std::vector<double> s(std::size_t(c.state_size()));
  for (int k = 0; k < c.horizons(); ++k) {
    for (std::size_t j = 0; j < s.size(); ++j) s[j] = calibration_state_(k, j);
    c.restore(k, s);
  }
  return c;
}

void TrainingForecaster::store(const forecast::AdaptiveConformal& c) {
  for (int k = 0; k < c.horizons(); ++k) {
    const std::vector<double> s = c.state(k);
    for (std::size_t j = 0; j < s.size(); ++j) calibration_state_(k, j) = s[j];
  }
}

double TrainingForecaster::window_log_loss(std::int64_t first, std::int64_t last) const {
  const auto cap = std::int64_t(loss_log_.extent(0));
  double sum = 0;
  for (std::int64_t s = first; s <= last; ++s) {
    const double v = loss_log_(std::size_t(s % cap));
    if (!std::isfinite(v)) return kNaN;
    sum += v;
  }
  return std::log(std::max(sum / double(last - first + 1), forecast::kMinLoss));
}

void TrainingForecaster::after_step(std::int64_t step, double loss, const View2<real>& features,
                                    const TelemetryHistory<real>& history) {
  Kokkos::Timer timer;
  if (!settings_.learned()) {
    auto& online = dynamics_.online();
    const auto x = Kokkos::subview(features, 0, Kokkos::ALL());
    online.observe(View1<real>(x), std::max(loss, forecast::kMinLoss));
    seconds_filter += timer.seconds();
    timer.reset();
    online.train_step();
    Kokkos::fence();
    seconds_train += timer.seconds();
  }

  log_loss(step, loss);
  if (step % settings_.every == 0 && trained()) {
    timer.reset();
    forecast_at(step, features, history);
    seconds_forecast += timer.seconds();
  }
}

bool TrainingForecaster::trained() const {
  if (settings_.learned())  // the pretrained model needs a history as long as its corpus gave
    return learned_seen_(0) >= forecast::LevelSampling{}.first_origin;
  const auto& online = dynamics_.online();
  return online.observed() > std::int64_t(online.options().bptt);
}

void TrainingForecaster::log_loss(std::int64_t step, double loss) {
  loss_log_(std::size_t(step % std::int64_t(loss_log_.extent(0)))) = loss;
  if (settings_.learned() && step >= 0) {
    step_losses_(std::size_t(step % kLearnedHistory)) = loss;
    if (std::isfinite(loss)) learned_seen_(0) += 1;
  }
  score_due(step);
}

ForecastNow TrainingForecaster::forecast_now(std::int64_t step, const View2<real>& features,
                                             const TelemetryHistory<real>& history) {
  Kokkos::Timer timer;
  ForecastNow f = compute(step, features, history);
  seconds_forecast += timer.seconds();
  return f;
}

ForecastNow TrainingForecaster::compute(std::int64_t step, const View2<real>& features,
                                        const TelemetryHistory<real>& history) {
  if (settings_.learned()) return compute_learned(step);
  encoder_.extract_loss_state(history, loss_states_);
  RolloutInputs<real> in;
  in.x0 = Kokkos::subview(features, 0, Kokkos::ALL());
  in.loss_states = loss_states_;
  in.run = 0;
  in.norm_mean = encoder_.normalizer_mean(0);
  in.norm_inv_std = encoder_.normalizer_inv_std(0);
  dynamics_.rollout(in, rollout_, out_);
  const auto paths = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out_.loss_paths);
  const int N = int(paths.extent(0)), E = int(paths.extent(1)), J = int(paths.extent(2));
  const forecast::AdaptiveConformal cal = calibration();
  ForecastNow now;
  now.level = window_log_loss(step - 9, step);
  // An imagined path can overflow; 1e30 bounds its log so the statistics stay finite.
  auto bounded_log = [](double w) {
    return std::log(std::min(std::max(w, forecast::kMinLoss), 1e30));
  };
  now.mean_log_path.assign(std::size_t(J), 0.0);
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < E; ++m)
      for (int j = 0; j < J; ++j)
        now.mean_log_path[std::size_t(j)] += bounded_log(double(paths(n, m, j))) / double(N * E);
  for (std::size_t k = 0; k < settings_.horizons.size(); ++k) {
    const int h = settings_.horizons[k];
    // Per path: log of its mean loss over steps h-4 .. h+5 after the origin (entry j = j steps on).
    std::vector<double> v;
    v.reserve(std::size_t(N * E));
    double mean = 0;
    for (int n = 0; n < N; ++n)
      for (int m = 0; m < E; ++m) {
        double s = 0;
        for (int j = h - forecast::kTargetBefore; j <= h + forecast::kTargetAfter; ++j)
          s += double(paths(n, m, j));
        const double l = bounded_log(s / (forecast::kTargetBefore + forecast::kTargetAfter + 1));
        v.push_back(l);
        mean += l / double(N * E);
      }
    std::sort(v.begin(), v.end());
    now.horizons.push_back(
        horizon_forecast(cal, k, mean, quantile(v, 0.05), quantile(v, 0.50), quantile(v, 0.95)));
  }
  return now;
}

// Horizon k's forecast from its raw 5/50/95 % quantiles, calibrated.
HorizonForecast TrainingForecaster::horizon_forecast(const forecast::AdaptiveConformal& cal,
                                                     std::size_t k, double mean, double raw_q05,
                                                     double q50, double raw_q95) const {
  HorizonForecast hf;
  hf.raw_q05 = raw_q05, hf.raw_q95 = raw_q95;
  const forecast::Interval iv = cal.apply(int(k), raw_q05, q50, raw_q95);
  hf.horizon = settings_.horizons[k], hf.mean = mean;
  hf.lo = iv.lo, hf.mid = iv.mid, hf.hi = iv.hi;
  hf.scored = cal.updates(int(k));
  hf.coverage = cal.realised_coverage(int(k));
  hf.width_factor = cal.width_factor(int(k));
  return hf;
}

// The schedule's learning rate of step s (its last one beyond the plan).
double TrainingForecaster::planned_lr(std::int64_t s) const {
  const auto& p = settings_.planned_lr;
  return std::size_t(s) < p.size() ? p[std::size_t(s)] : p.back();
}

// The learned level forecaster's forecasts from the losses of the steps so far and the schedule's
// rates of every step (the steps without a loss, predicted ones, are left out of the history, as a
// curve file would); the mean path runs linearly from the level through the horizons' medians.
ForecastNow TrainingForecaster::compute_learned(std::int64_t step) const {
  std::vector<long long> steps;
  std::vector<double> loss, lr;
  for (std::int64_t s = std::max<std::int64_t>(0, step - kLearnedHistory + 1); s <= step; ++s) {
    const double l = step_losses_(std::size_t(s % kLearnedHistory));
    if (std::isfinite(l)) steps.push_back(s), loss.push_back(l), lr.push_back(planned_lr(s));
  }
  const int n = int(steps.size());
  // The plan as far as the largest horizon reaches: the features read no further.
  const std::size_t until = std::min(
      settings_.planned_lr.size(), std::size_t(step) + 1 + std::size_t(settings_.horizons.back()));
  for (std::size_t s = std::size_t(step) + 1; s < until; ++s)
    steps.push_back((long long)s), lr.push_back(settings_.planned_lr[s]);
  const forecast::LevelHistory hist = forecast::level_history(steps, loss, n);
  const forecast::AdaptiveConformal cal = calibration();
  ForecastNow now;
  now.level = window_log_loss(step - 9, step);
  now.mean_log_path.assign(std::size_t(rollout_.horizon), now.level);
  double prev_level = now.level;
  int prev_h = 0;
  for (std::size_t k = 0; k < settings_.horizons.size(); ++k) {
    const int h = settings_.horizons[k];
    const forecast::LevelForecast f =
        forecast::level_forecast_ahead(settings_.level_model, hist, steps, lr, h);
    // A half without width takes the other's (forecast/adaptive_conformal.hpp says why).
    const forecast::Interval raw = forecast::with_both_halves({f.lo, f.mid, f.hi}, 0, 0);
    now.horizons.push_back(horizon_forecast(cal, k, f.mid, raw.lo, f.mid, raw.hi));
    for (int j = prev_h; j <= h && j < rollout_.horizon; ++j)
      now.mean_log_path[std::size_t(j)] =
          prev_level + (f.mid - prev_level) * double(j - prev_h) / double(h - prev_h);
    prev_level = f.mid, prev_h = h;
  }
  for (int j = prev_h + 1; j < rollout_.horizon; ++j)
    now.mean_log_path[std::size_t(j)] = prev_level;
  return now;
}

void TrainingForecaster::forecast_at(std::int64_t step, const View2<real>& features,
                                     const TelemetryHistory<real>& history) {
  const ForecastNow now = compute(step, features, history);
  for (std::size_t k = 0; k < now.horizons.size(); ++k) {
    const HorizonForecast& f = now.horizons[k];
    for (std::size_t i = 0; i < pending_.extent(0); ++i) {
      if (pending_(i, kOrigin) >= 0) continue;
      pending_(i, kOrigin) = double(step);
      pending_(i, kHorizonIndex) = double(k);
      pending_(i, kMean) = f.mean;
      pending_(i, kQ50) = f.mid;
      pending_(i, kWidth) = f.width_factor;
      pending_(i, kRawQ05) = f.raw_q05;
      pending_(i, kRawQ95) = f.raw_q95;
      break;
    }
  }
}

void TrainingForecaster::score_due(std::int64_t step) {
  forecast::AdaptiveConformal cal = calibration();
  bool changed = false;
  // In the order the forecasts were made (origin, then horizon), as the calibration expects.
  std::vector<std::size_t> due;
  for (std::size_t i = 0; i < pending_.extent(0); ++i) {
    if (pending_(i, kOrigin) < 0) continue;
    const int h = settings_.horizons[std::size_t(pending_(i, kHorizonIndex))];
    if (std::int64_t(pending_(i, kOrigin)) + h + forecast::kTargetAfter == step) due.push_back(i);
  }
  std::sort(due.begin(), due.end(), [&](std::size_t a, std::size_t b) {
    return std::make_pair(pending_(a, kOrigin), pending_(a, kHorizonIndex)) <
           std::make_pair(pending_(b, kOrigin), pending_(b, kHorizonIndex));
  });
  for (const std::size_t i : due) {
    const int k = int(pending_(i, kHorizonIndex));
    const int h = settings_.horizons[std::size_t(k)];
    const auto origin = std::int64_t(pending_(i, kOrigin));
    ForecastRow r;
    r.origin = origin, r.horizon = h, r.resolved = step;
    const double raw_q05 = pending_(i, kRawQ05), raw_q95 = pending_(i, kRawQ95);
    r.mean = pending_(i, kMean), r.q50 = pending_(i, kQ50), r.width_factor = pending_(i, kWidth);
    const forecast::Interval issued = forecast::widen(r.width_factor, raw_q05, r.q50, raw_q95);
    r.q05 = issued.lo, r.q95 = issued.hi;
    r.target =
        window_log_loss(origin + h - forecast::kTargetBefore, origin + h + forecast::kTargetAfter);
    pending_(i, kOrigin) = -1;
    if (!std::isfinite(r.target)) continue;
    r.inside = r.target >= r.q05 && r.target <= r.q95;
    cal.update(k, r.inside == 1, forecast::conformal_score(r.target, raw_q05, r.q50, raw_q95));
    changed = true;
    error_sums_(k) += std::fabs(r.mean - r.target);
    scored_.push_back(r);
  }
  if (changed) store(cal);
}

std::vector<ForecastRow> TrainingForecaster::take_scored() {
  std::vector<ForecastRow> out;
  out.swap(scored_);
  return out;
}

std::vector<HorizonScore> TrainingForecaster::scores() const {
  const forecast::AdaptiveConformal cal = calibration();
  std::vector<HorizonScore> out;
  for (std::size_t k = 0; k < settings_.horizons.size(); ++k) {
    HorizonScore s;
    s.horizon = settings_.horizons[k];
    s.scored = cal.updates(int(k));
    s.mean_abs_error = s.scored > 0 ? error_sums_(k) / double(s.scored) : kNaN;
    s.coverage = cal.realised_coverage(int(k));
    out.push_back(s);
  }
  return out;
}

void TrainingForecaster::declare_state(StateRegistry& registry, const std::string& prefix) {
  if (settings_.learned()) {  // the ensemble is not used: its state is not the run's
    registry.add_view(prefix + "step_losses", step_losses_);
    registry.add_view(prefix + "learned_seen", learned_seen_);
  } else {
    auto& online = dynamics_.online();
    for (const auto& b : online.state_buffers()) registry.add_view(prefix + b.name, b.view);
    for (auto& c : online.state_counters()) registry.add_int(prefix + c.name, c.get, c.set);
  }
  registry.add_view(prefix + "loss_log", loss_log_);
  registry.add_view(prefix + "pending", pending_);
  registry.add_view(prefix + "calibration", calibration_state_);
  registry.add_view(prefix + "error_sums", error_sums_);
}

}  // namespace hpt::train
