#include "train/prototype_policy.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "io/console.hpp"
#include "kernels/telemetry_history.hpp"
#include "train/data_parallel.hpp"

namespace hpt::train {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

bool real_phase(Phase p) {
  return p == Phase::Warmup || p == Phase::Full;
}

}  // namespace

PrototypePolicy::PrototypePolicy(const TrainState& state, const LrSchedule& schedule,
                                 const PrototypeSchedule& settings, PrototypeRssm& rssm,
                                 const MonitorThresholds& monitor)
    : state_(state),
      schedule_(schedule),
      settings_(settings),
      rssm_(rssm),
      controller_(settings),
      monitor_(monitor),
      x_("hpt::prototype_features", std::size_t(kFeatures)),
      confidence_(kNaN),
      state_loss_(kNaN) {
  HPT_REQUIRE(rssm_.options().input == kFeatures,
              "PrototypePolicy: the forecaster's input must be the encoder's features");
}

std::string PrototypePolicy::name() const {
  return "hybrid, the prototype's controller (parity; predicted and corrective steps keep the "
         "parameters)";
}

void PrototypePolicy::decide(const std::int64_t done) {
  Kokkos::Timer t;
  // The confidence only matters once the warmup is over (the prototype computed it every step).
  confidence_ = done >= settings_.warmup ? rssm_.confidence(x_, emas_) : kNaN;
  const PrototypeDecision d = controller_.next(done, confidence_);
  phase_ = d.phase, left_ = length_ = d.steps;
  if (phase_ == Phase::Predict) {
    const PrototypeForecast f = rssm_.forecast(x_, length_);
    path_ = f.mean_path;
    upper_ = f.mean_path.back() + 2.0 * f.total_std;
    ++counts_.predict_blocks;
    events_.push_back({done + 1, TraceEvent::PredictStart, double(length_), ""});
  }
  seconds_decide_ += t.seconds();
}

StepOutcome PrototypePolicy::run(const std::int64_t step, const int batch_size) {
  if (left_ == 0) decide(step - 1);
  --left_;
  Kokkos::Timer t;
  StepOutcome out;
  if (real_phase(phase_)) {
    out = real_step(state_, schedule_, step, batch_size);
    Kokkos::fence();
    seconds_real_ += t.seconds();
  } else {
    out.real = false;
    out.lr = schedule_(step - 1);
    out.loss = mean_over_ranks(  // data-parallel: the global batch's loss
        state_.comm, state_.model.forward(model_batch(state_.dataset.next_batch(batch_size))));
    Kokkos::fence();
    seconds_forward_ += t.seconds();
    ++(phase_ == Phase::Predict ? counts_.predicted_steps : counts_.correct_steps);
  }
  out.phase = int(phase_);
  return out;
}

void PrototypePolicy::after_step(const std::int64_t step, StepOutcome& out,
                                 const View2<real>& features) {
  const double loss = out.loss.loss;
  const bool predicting = phase_ == Phase::Predict;
  out.block_horizon = predicting ? length_ : 0;
  out.forecast_mean = predicting ? std::log(path_.back()) : kNaN;
  out.forecast_hi = predicting ? std::log(upper_) : kNaN;
  out.confidence = lead() == 1 ? confidence_ : kNaN;
  // The forecaster learns on Full steps from the state before the step.
  if (out.real && phase_ == Phase::Full) rssm_.observe(x_, state_loss_, loss);

  StepSignals sig;
  sig.loss = loss;
  sig.has_grad = out.real;
  sig.grad_norm = out.optimizer.grad_norm;
  sig.has_forecast = predicting;
  sig.forecast = predicting ? path_[std::size_t(lead() - 1)] : 0.0;
  const DivergenceVerdict v = monitor_.observe(sig);
  if (phase_ != Phase::Warmup && v.level >= Alarm::Warning) {
    const bool critical = v.level == Alarm::Critical;
    if (!critical) controller_.warning();
    ++(critical ? counts_.criticals : counts_.warnings);
    events_.push_back({step,
                       critical ? TraceEvent::DivergenceCritical : TraceEvent::DivergenceWarning,
                       loss, ""});
    phase_ = Phase::Full, left_ = length_ = settings_.full_steps;
    confidence_ = kNaN;  // the forced block was no decision of the controller
  }
  if (std::isfinite(loss)) emas_.update(loss);
  state_loss_ = loss;
  if (out.real) Kokkos::deep_copy(x_, Kokkos::subview(features, 0, Kokkos::ALL()));
}

void PrototypePolicy::declare_state(StateRegistry& r, const std::string& p) {
  r.add_counts(
      p + "controller", [this] { return controller_.save(); },
      [this](const std::vector<std::int64_t>& v) { controller_.restore(v); });
  r.add_values(
      p + "block",
      [this] {
        std::vector<double> v{double(phase_),
                              double(left_),
                              double(length_),
                              confidence_,
                              state_loss_,
                              upper_,
                              emas_.fast,
                              emas_.medium,
                              emas_.slow,
                              double(emas_.count),
                              double(counts_.predict_blocks),
                              double(counts_.predicted_steps),
                              double(counts_.correct_steps),
                              double(counts_.warnings),
                              double(counts_.criticals)};
        v.insert(v.end(), path_.begin(), path_.end());
        return v;
      },
      [this](const std::vector<double>& v) {
        HPT_REQUIRE(v.size() >= 15, "PrototypePolicy: wrong block state size");
        phase_ = Phase(int(v[0])), left_ = int(v[1]), length_ = int(v[2]);
        confidence_ = v[3], state_loss_ = v[4], upper_ = v[5];
        emas_.fast = v[6], emas_.medium = v[7], emas_.slow = v[8];
        emas_.count = std::int64_t(v[9]);
        counts_ = {std::int64_t(v[10]), std::int64_t(v[11]), std::int64_t(v[12]),
                   std::int64_t(v[13]), std::int64_t(v[14])};
        path_.assign(v.begin() + 15, v.end());
      });
  r.add_values(
      p + "monitor", [this] { return monitor_.save(); },
      [this](const std::vector<double>& v) { monitor_.load(v); });
  r.add_view(p + "features", x_);
  for (const auto& [name, view] : rssm_.state_buffers()) r.add_view(p + "rssm_" + name, view);
  r.add_values(
      p + "rssm_values", [this] { return rssm_.save_values(); },
      [this](const std::vector<double>& v) { rssm_.load_values(v); });
}

std::vector<std::pair<std::string, double>> PrototypePolicy::counters() const {
  return {{"predict_blocks", double(counts_.predict_blocks)},
          {"predicted_steps_made", double(counts_.predicted_steps)},
          {"correct_steps", double(counts_.correct_steps)},
          {"divergence_warnings", double(counts_.warnings)},
          {"divergence_criticals", double(counts_.criticals)},
          {"seconds_real_steps", seconds_real_},
          {"seconds_forward_only_steps", seconds_forward_},
          {"seconds_entry_decisions", seconds_decide_}};
}

std::vector<std::pair<std::string, std::string>> PrototypePolicy::report(double real_steps) const {
  const double per = 1e3 / std::max(1.0, real_steps);
  return {
      {"parity: predict blocks / predicted steps / correct steps",
       std::to_string(counts_.predict_blocks) + " / " + std::to_string(counts_.predicted_steps) +
           " / " + std::to_string(counts_.correct_steps)},
      {"parity: divergence warnings / criticals",
       std::to_string(counts_.warnings) + " / " + std::to_string(counts_.criticals)},
      {"parity: forecaster one-step errors recorded", std::to_string(rssm_.errors_recorded())},
      {"parity: real steps", io::fmt(seconds_real_ * per, 4) + " ms per real step"},
      {"parity: forward-only steps", io::fmt(seconds_forward_, 4) + " s"},
      {"parity: forecaster training", io::fmt(rssm_.seconds_train, 4) + " s"},
      {"parity: forecaster rollouts (confidence, forecasts)",
       io::fmt(rssm_.seconds_forecast, 4) + " s"},
  };
}

}  // namespace hpt::train
