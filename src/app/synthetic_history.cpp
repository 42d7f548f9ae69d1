#include "app/synthetic_history.hpp"

#include <cmath>

#include "core/rng.hpp"

namespace hpt::app {

void fill_synthetic_history(const TelemetryHistory<real>& history, const SyntheticHistorySpec& spec,
                            const std::function<void()>& after_step) {
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> records("hpt::synthetic_record",
                                                                        history.runs());
  auto host = Kokkos::create_mirror_view(records);
  const double tau = std::max(1.0, spec.steps / 3.0);  // the loss has decayed by e^-3 at the end
  double prev_update = 0.0;
  for (int k = 0; k < spec.steps; ++k) {
    const double decay = std::exp(-k / tau);
    const double eps = rng::normal(rng::key(spec.seed, 0x5157, std::uint64_t(k)));
    const double loss = (spec.final_loss + (spec.initial_loss - spec.final_loss) * decay) *
                        std::exp(spec.noise * eps);
    const double grad = 0.5 + 2.0 * decay * std::exp(0.2 * eps);
    TelemetryRecord r;
    r.step = k;
    r.phase = telemetry::kFull;
    r.steps_in_phase = k;
    r.has_loss = true;
    r.loss = loss;
    r.has_val_loss = (k % 20 == 19);
    r.val_loss = loss * 1.05;
    r.has_grad = true;
    r.grad_norm = grad;
    r.grad_tensor_log_std = 0.3;
    r.grad_tensor_log_range = 1.0;
    r.has_update = true;
    r.update_norm = spec.lr * grad;
    r.weight_norm = 10.0 + 0.01 * k;
    r.has_update_cos = k > 0;
    r.update_cos = prev_update > 0 ? 0.8 : 0.0;
    prev_update = r.update_norm;
    r.lr = spec.lr;
    r.effective_lr = spec.lr;
    r.moment_mean = r.update_norm;
    r.moment_std = 0.5 * r.update_norm;
    for (int i = 0; i < history.runs(); ++i) host(i) = r;
    Kokkos::deep_copy(records, host);
    push_records(ExecSpace(), history, View1<const TelemetryRecord>(records));
    if (after_step) after_step();
  }
}

}  // namespace hpt::app
