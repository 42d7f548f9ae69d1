#pragma once
// Dynamics style `rssm_prototype` (docs/method.md#parity-with-the-prototype): the prototype's RSSM
// (kernels/rssm_prototype.hpp) with its online rule and its confidence, so that hpt's parity
// controller can be compared with the prototype. Its forecasts are point paths of the raw loss; the
// ensemble spread is its only uncertainty (no calibration).
#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/types.hpp"
#include "kernels/rssm_prototype.hpp"

namespace hpt {

struct PrototypeRssmOptions {
  int members = 3, hidden = 256, stochastic = 32, input = kFeatures;
  double lr = 1e-3;   // SGD step of the GRUs and the head
  double clip = 5.0;  // per-member global gradient-norm clip of the GRU step
  std::uint64_t seed = 1;
};

// dynamics.members, hidden, stochastic, lr, clip_norm, seed.
PrototypeRssmOptions prototype_rssm_options(const Config& config);

// The prototype's three loss EMAs (time constants 4, 16, 64 steps); the first value sets all three.
struct LossEmas {
  double fast = 0, medium = 0, slow = 0;
  std::int64_t count = 0;
  void update(double loss);
};

// A Y-step forecast: the members' mean loss per lead (entry t = t + 1 steps ahead), and the
// spread of the final values widened with the horizon, std_E(L_Y) (1 + 0.1 sqrt(Y)).
struct PrototypeForecast {
  std::vector<double> mean_path;
  double total_std = 0;
};

class PrototypeRssm {
 public:
  explicit PrototypeRssm(const PrototypeRssmOptions& options);
  PrototypeRssm(const PrototypeRssm&) = delete;
  PrototypeRssm& operator=(const PrototypeRssm&) = delete;

  // W, U ~ U(+-sqrt(2 / (I + H))), biases 0, head ~ U(+-0.01); latents, errors and counts zeroed.
  void initialize(std::uint64_t seed);

  // The members' decoded losses, (E, steps) row-major, from the current latents and features x.
  std::vector<double> member_paths(const View1<real>& x, int steps);
  PrototypeForecast forecast(const View1<real>& x, int steps);

  // The prototype's observe_gradient: one training step towards `target` (this step's loss), and
  // |1-step forecast before it - state_loss| recorded (the loss already in its state, the previous
  // step's).
  void observe(const View1<real>& x, double state_loss, double target);

  // 0.4 / (1 + total_std of a 10-step forecast) + 0.4 history + 0.2 stability, clamped to [0, 1]:
  // history 0.7 before 10 errors, else min(0.99, 1 / (1 + mean of the newest 50)); stability
  // max(0.5, 1 / (1 + 2 |fast - slow| / |slow|)), with the ratio 1 when |slow| <= 1e-6.
  double confidence(const View1<real>& x, const LossEmas& emas);

  int members() const { return options_.members; }
  const PrototypeRssmOptions& options() const { return options_; }
  const PrototypeRssmParams<real>& params() const { return params_; }
  View2<real> latents() const { return latents_; }
  std::int64_t training_steps() const { return training_steps_; }
  std::int64_t errors_recorded() const { return errors_recorded_; }

  // Device buffers of its state (parameters and latents) by name, and its host values.
  std::vector<std::pair<std::string, View1<real>>> state_buffers() const;
  std::vector<double> save_values() const;
  void load_values(const std::vector<double>& values);

  double seconds_train = 0, seconds_forecast = 0;  // fenced

 private:
  PrototypeRssmOptions options_;
  PrototypeRssmParams<real> params_;
  View2<real> latents_;
  View2<real> traj_;
  PrototypeRssmWork<real> work_;
  View2<real>::host_mirror_type traj_host_;
  View1<real>::host_mirror_type predicted_host_;
  std::deque<double> errors_;  // the newest 50 recorded errors
  std::int64_t errors_recorded_ = 0, training_steps_ = 0;
};

}  // namespace hpt
