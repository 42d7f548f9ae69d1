#include "train/hybrid_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include "core/crash_point.hpp"
#include "io/console.hpp"
#include "kernels/telemetry_history.hpp"
#include "kernels/update_kernels.hpp"
#include "train/data_parallel.hpp"
#include "train/evaluation.hpp"

namespace hpt::train {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kZ90 = 1.6448536269514722;  // the 95 % quantile of the standard normal

std::string fmt(double v, int digits = 4) {
  return io::fmt(v, digits);
}

}  // namespace

HybridPolicy::HybridPolicy(const TrainState& state, const LrSchedule& schedule,
                           const HybridSettings& settings,
                           std::unique_ptr<UpdatePredictor> predictor, std::int64_t total_steps)
    : state_(state),
      schedule_(schedule),
      settings_(settings),
      predictor_(std::move(predictor)),
      total_steps_(total_steps),
      controller_(settings),
      snapshot_(state.model, state.optimizer),
      monitor_(settings.monitor) {
  HPT_REQUIRE(state_.forecaster != nullptr, "HybridPolicy needs the training forecaster");
  predictor_->bind(state_.model.parameters());
  block_path_ = Kokkos::View<double*, Kokkos::HostSpace>("hpt::hybrid_block_path",
                                                         std::size_t(settings_.max_horizon + 1));
  if (settings_.step_scales != std::vector<double>{1.0})
    block_end_ = View1<real>("hpt::hybrid_block_end", state_.model.parameters().values().extent(0));
}

std::string HybridPolicy::name() const {
  return "hybrid (update " + predictor_->summary() + ")";
}

int HybridPolicy::phase_code() const {
  // The controller's phases are numbered as the telemetry's phase codes.
  static_assert(int(Phase::Warmup) == telemetry::kWarmup && int(Phase::Full) == telemetry::kFull &&
                    int(Phase::Predict) == telemetry::kPredict &&
                    int(Phase::Correct) == telemetry::kCorrect,
                "Phase and telemetry::PhaseCode must agree");
  return int(controller_.phase());
}

double HybridPolicy::probe_loss() {
  Kokkos::Timer t;
  // Data-parallel: each process evaluates its shard of the probe rows, one allreduce gives all the
  // same loss, so all decide alike.
  const double l =
      evaluate_probe_rows(state_.model, state_.dataset, state_.comm, settings_.probe_rows).loss;
  seconds_verify_ += t.seconds();
  return l;
}

StepOutcome HybridPolicy::run(std::int64_t step, int batch_size) {
  if (!snapshot_.taken()) snapshot_.take();  // the state at the start is the first good one
  Kokkos::Timer t;
  if (controller_.phase() != Phase::Predict) {
    StepOutcome out;
    if (fault_point("non_finite_loss", step)) {
      out.loss.loss = std::numeric_limits<double>::infinity();
      out.drew_batch = false;
      out.non_finite = true, out.non_finite_value = out.loss.loss, out.non_finite_what = "loss";
    } else {
      out = real_step(state_, schedule_, step, batch_size, controller_.lr_factor(step));
      if (fault_point("signal_spike", step)) {  // what the monitor sees, the update unchanged
        out.loss.loss *= 1e4;
        out.optimizer.grad_norm *= 1e4;
      }
    }
    out.phase = phase_code();
    Kokkos::fence();
    seconds_real_ += t.seconds();
    // A non-finite value is recovered from once per halved-learning-rate window; a second one
    // inside the window stops the run (the trainer reports it).
    if (out.non_finite && step > controller_.lr_half_until()) {
      restore_after_alarm(step, out.non_finite_value,
                          "the " + out.non_finite_what + " is not finite");
      out.non_finite = false;
      out.real = false;  // nothing was applied: the step counts as no backward pass kept
      out.loss.loss = out.loss.accuracy = kNaN;
    }
    return out;
  }
  StepOutcome out;
  out.real = false;
  out.phase = telemetry::kPredict;
  out.lr = schedule_(step - 1) * controller_.lr_factor(step);
  predictor_->predict(controller_.lead() + 1);
  out.loss.loss = out.loss.accuracy = kNaN;
  out.drew_batch = settings_.probe_every_step;
  if (settings_.probe_every_step)  // data-parallel: the global batch's loss, as a real step's
    out.loss = mean_over_ranks(
        state_.comm, state_.model.forward(model_batch(state_.dataset.next_batch(batch_size))));
  Kokkos::fence();
  seconds_predict_ += t.seconds();
  return out;
}

void HybridPolicy::after_step(std::int64_t step, StepOutcome& out, const View2<real>& features) {
  const Phase phase = controller_.phase();
  out.block_horizon = phase == Phase::Predict ? controller_.horizon() : 0;
  out.forecast_mean = phase == Phase::Predict ? block_mean_ : kNaN;
  out.forecast_hi = phase == Phase::Predict ? block_hi_ : kNaN;
  out.confidence = confidence_;
  if (out.real && out.optimizer.applied) {
    Kokkos::Timer t;
    predictor_->observe();
    Kokkos::fence();
    seconds_predict_ += t.seconds();
  }

  StepSignals sig;
  sig.loss = out.loss.loss;
  sig.has_grad = out.real;
  sig.grad_norm = out.optimizer.grad_norm;
  if (phase == Phase::Predict) {
    const std::size_t lead = std::size_t(controller_.lead() + 1);
    sig.has_forecast = lead < block_path_.extent(0) && std::isfinite(block_path_(lead));
    sig.forecast = sig.has_forecast ? std::exp(block_path_(lead)) : 0.0;
  }
  DivergenceVerdict verdict;
  const bool measured = std::isfinite(out.loss.loss) || out.non_finite;
  if (measured) verdict = monitor_.observe(sig);

  if (phase == Phase::Predict) {
    const bool last = controller_.predicted_step_done();
    if (!std::isfinite(out.loss.loss) && settings_.probe_every_step) {
      // A non-finite loss at predicted parameters: the block is rolled back like a failed one.
      snapshot_.restore();
      controller_.rolled_back();
      out.verdict = -1;
      events_.push_back({step, TraceEvent::Rollback, out.loss.loss, ""});
      return;
    }
    if (last || verdict.level >= Alarm::Warning) {
      finish_block(step, out);
      if (verdict.level >= Alarm::Warning && out.verdict > 0) {
        controller_.warning();
        warn(step, out.loss.loss, verdict.reason);
      }
    }
    return;
  }
  if (!out.real) return;  // a real step recovered from a non-finite value (already handled)
  if (verdict.level == Alarm::Critical) {
    restore_after_alarm(step, out.loss.loss, verdict.reason);
    return;
  }
  if (verdict.level == Alarm::Warning) {
    controller_.warning();
    warn(step, out.loss.loss, verdict.reason);
    return;
  }
  if (controller_.real_step_done()) decide(step, features);
}

void HybridPolicy::decide(std::int64_t step, const View2<real>& features) {
  Kokkos::Timer t;
  snapshot_.take();
  TrainingForecaster& fc = *state_.forecaster;
  const std::int64_t left = total_steps_ - step;
  int chosen = 0;
  confidence_ = kNaN;
  ForecastNow now;
  const bool consulted =
      controller_.may_predict() && predictor_->ready() && fc.trained() && left > 1;
  if (consulted) {
    now = fc.forecast_now(step, features, state_.history);
    const int cap = int(std::min<std::int64_t>(controller_.horizon_cap(), left - 1));
    // Largest confident horizon first.
    std::vector<HorizonForecast> hs = now.horizons;
    std::sort(hs.begin(), hs.end(), [](const HorizonForecast& a, const HorizonForecast& b) {
      return a.horizon > b.horizon;
    });
    // The trace's `confidence`: std / improvement of the chosen horizon, or else of the largest
    // one allowed.
    bool first = true;
    for (const HorizonForecast& h : hs) {
      if (h.horizon > cap) continue;
      const double improvement = now.level - h.mean;
      const double sd = (h.hi - h.lo) / (2.0 * kZ90);
      const double ratio = improvement > 0 ? sd / improvement : kNaN;
      if (first) confidence_ = ratio, first = false;
      if (std::isfinite(ratio) && ratio <= settings_.confidence &&
          h.scored >= settings_.min_scored && h.coverage >= settings_.min_coverage) {
        chosen = h.horizon;
        confidence_ = ratio;
        block_mean_ = h.mean;
        block_hi_ = h.hi;
        bound_ratio_ = std::min(1.0 + settings_.tol, std::exp(h.hi - now.level));
        break;
      }
    }
  }
  seconds_decide_ += t.seconds();
  if (consulted) controller_.gate_decision(chosen != 0);
  if (chosen == 0) {
    controller_.stay_full();
    return;
  }
  Kokkos::deep_copy(block_path_, kNaN);
  for (std::size_t j = 0; j < std::min(block_path_.extent(0), now.mean_log_path.size()); ++j)
    block_path_(j) = now.mean_log_path[j];
  probe_before_ = probe_loss();
  t.reset();
  predictor_->begin_block();
  Kokkos::fence();
  seconds_predict_ += t.seconds();
  controller_.enter_predict(chosen);
  events_.push_back({step, TraceEvent::PredictStart, double(chosen), ""});
}

// Tries each step scale a: parameters = start + a (end - start) of the block; keeps the scale with
// the lowest probe loss (the first of equals) and returns that loss.
double HybridPolicy::scale_block_motion() {
  const View1<real> params = state_.model.parameters().values();
  const View1<const real> start = snapshot_.parameters();
  Kokkos::deep_copy(block_end_, params);
  double best = kNaN, best_scale = settings_.step_scales.front();
  const auto move_to = [&](double a) {  // start + a (end - start)
    linear_combination<ExecSpace, real>(ExecSpace(), params, start, 1.0 - a, block_end_, a, start,
                                        0.0);
  };
  for (const double a : settings_.step_scales) {
    move_to(a);
    const double l = probe_loss();
    if (std::isfinite(l) && !(l >= best)) best = l, best_scale = a;
  }
  move_to(best_scale);
  last_scale_ = best_scale;
  return best;
}

void HybridPolicy::finish_block(std::int64_t step, StepOutcome& out) {
  const bool scaled = block_end_.extent(0) > 0;
  const double after = scaled ? scale_block_motion() : probe_loss();
  if (scaled) events_.push_back({step, TraceEvent::PredictStepScale, last_scale_, ""});
  const double ratio = after / probe_before_;
  if (std::isfinite(after) && ratio <= bound_ratio_) {
    Kokkos::Timer t;
    predictor_->shift_history(snapshot_.parameters());
    if (settings_.zero_momentum_after_accept) state_.optimizer.zero_first_moment();
    Kokkos::fence();
    seconds_predict_ += t.seconds();
    controller_.accepted();
    out.verdict = 1;
    events_.push_back({step, TraceEvent::PredictAccepted, ratio, ""});
    return;
  }
  snapshot_.restore();
  controller_.rolled_back();
  out.verdict = -1;
  events_.push_back({step, TraceEvent::Rollback, ratio, ""});
}

void HybridPolicy::warn(std::int64_t step, double loss, const std::string& reason) {
  // Every warning is in the trace; the console hears of it once per episode (warnings further apart
  // than the Full block a warning forces).
  const bool new_episode = step - last_warning_ > 2 * std::int64_t(settings_.full_steps);
  last_warning_ = step;
  events_.push_back({step, TraceEvent::DivergenceWarning, loss,
                     new_episode ? "divergence warning at step " + std::to_string(step) + " (" +
                                       reason + "): a Full block of " +
                                       std::to_string(2 * settings_.full_steps) + " steps"
                                 : std::string()});
}

void HybridPolicy::restore_after_alarm(std::int64_t step, double loss, const std::string& why) {
  snapshot_.restore();
  predictor_->reset();
  monitor_.clear_escalation();
  controller_.critical(step);
  std::ostringstream msg;
  msg << "divergence critical at step " << step << " (" << why
      << "): parameters and optimizer state restored from the last snapshot, learning rate halved "
         "until step "
      << controller_.lr_half_until();
  events_.push_back({step, TraceEvent::DivergenceCritical, loss, msg.str()});
}

void HybridPolicy::declare_state(StateRegistry& r, const std::string& p) {
  r.add_counts(
      p + "controller", [this] { return controller_.save(); },
      [this](const std::vector<std::int64_t>& v) { controller_.restore(v); });
  r.add_values(
      p + "monitor", [this] { return monitor_.save(); },
      [this](const std::vector<double>& v) { monitor_.load(v); });
  r.add_values(
      p + "block",
      [this] {
        return std::vector<double>{probe_before_, bound_ratio_, block_mean_, block_hi_,
                                   confidence_};
      },
      [this](const std::vector<double>& v) {
        HPT_REQUIRE(v.size() == 5, "HybridPolicy: wrong block state size");
        probe_before_ = v[0], bound_ratio_ = v[1], block_mean_ = v[2], block_hi_ = v[3];
        confidence_ = v[4];
      });
  r.add_view(p + "block_path", block_path_);
  snapshot_.declare_state(r, p + "snapshot_");
  for (const auto& b : predictor_->state_views()) r.add_view(p + "update_" + b.name, b.view);
  r.add_int(
      p + "update_observed", [this] { return std::int64_t(predictor_->observed()); },
      [this](std::int64_t v) { predictor_->set_counters(long(v), predictor_->ring_head()); });
  r.add_int(
      p + "update_head", [this] { return std::int64_t(predictor_->ring_head()); },
      [this](std::int64_t v) { predictor_->set_counters(predictor_->observed(), int(v)); });
}

void HybridPolicy::after_load() {
  // The block's extrapolation is fitted from the kept snapshots, which a predict block leaves
  // unchanged: fitting again reproduces it.
  if (controller_.phase() == Phase::Predict) predictor_->begin_block();
}

std::vector<std::pair<std::string, double>> HybridPolicy::counters() const {
  const auto& c = controller_.counters();
  return {{"blocks_accepted", double(c.accepted)},
          {"blocks_rolled_back", double(c.rolled_back)},
          {"predicted_steps_made", double(c.predicted_steps)},
          {"predicted_steps_kept", double(c.predicted_kept)},
          {"gate_decisions", double(c.gate_asked)},
          {"gate_opened", double(c.gate_opened)},
          {"divergence_warnings", double(c.warnings)},
          {"divergence_criticals", double(c.criticals)},
          {"seconds_real_steps", seconds_real_},
          {"seconds_predicted_updates", seconds_predict_},
          {"seconds_verification", seconds_verify_},
          {"seconds_entry_decisions", seconds_decide_}};
}

std::vector<std::pair<std::string, std::string>> HybridPolicy::report(double real_steps) const {
  const auto& c = controller_.counters();
  const double per = 1e3 / std::max(1.0, real_steps);
  return {
      {"hybrid: predict blocks accepted / rolled back",
       std::to_string(c.accepted) + " / " + std::to_string(c.rolled_back)},
      {"hybrid: forecast gate opened / consulted",
       std::to_string(c.gate_opened) + " / " + std::to_string(c.gate_asked)},
      {"hybrid: predicted steps kept / made",
       std::to_string(c.predicted_kept) + " / " + std::to_string(c.predicted_steps)},
      {"hybrid: divergence warnings / criticals",
       std::to_string(c.warnings) + " / " + std::to_string(c.criticals)},
      {"hybrid: real steps", fmt(seconds_real_ * per) + " ms per real step"},
      {"hybrid: predicted updates", fmt(seconds_predict_, 4) + " s"},
      {"hybrid: verification (probe set)", fmt(seconds_verify_, 4) + " s"},
      {"hybrid: entry decisions (snapshot, rollouts)", fmt(seconds_decide_, 4) + " s"},
  };
}

}  // namespace hpt::train
