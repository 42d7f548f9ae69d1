#include "train/trainer.hpp"

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/crash_point.hpp"
#include "io/atomic_file.hpp"
#include "train/stop_signal.hpp"

namespace hpt::train {

namespace {

constexpr int kValidationChunk = 1024;  // rows per validation forward pass
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Model::batch_type model_batch(const View2<real>& x, const View1<int>& labels,
                              const View2<real>& targets) {
  Model::batch_type b;
  b.x = x;
  if (labels.extent(0) > 0) b.labels = labels;
  if (targets.extent(0) > 0) b.targets = targets;
  return b;
}

std::string format_seconds(double s) {
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

}  // namespace

Trainer::Trainer(const TrainState& state, const LrSchedule& schedule,
                 const TrainerSettings& settings)
    : state_(state), schedule_(schedule), settings_(settings) {
  const int val_chunk = int(std::min<std::int64_t>(kValidationChunk, state_.dataset.val_size()));
  state_.model.reserve_batch(std::max(settings_.batch_size, val_chunk));
}

Evaluation Trainer::evaluate_validation() {
  Dataset& d = state_.dataset;
  const std::int64_t n = d.val_size();
  Evaluation ev;
  if (n == 0) return {kNaN, kNaN};
  for (std::int64_t begin = 0; begin < n; begin += kValidationChunk) {
    const auto range = std::make_pair(begin, std::min<std::int64_t>(n, begin + kValidationChunk));
    const View2<real> x = Kokkos::subview(d.x_val(), range, Kokkos::ALL());
    const View1<int> labels = d.labels_val().extent(0) > 0
                                  ? View1<int>(Kokkos::subview(d.labels_val(), range))
                                  : View1<int>();
    const View2<real> targets =
        d.targets_val().extent(0) > 0
            ? View2<real>(Kokkos::subview(d.targets_val(), range, Kokkos::ALL()))
            : View2<real>();
    const LossValue lv = state_.model.forward(model_batch(x, labels, targets));
    const double rows = double(range.second - range.first);
    ev.loss += lv.loss * rows;
    ev.accuracy += lv.accuracy * rows;
  }
  ev.loss /= double(n);
  ev.accuracy /= double(n);
  return ev;
}

std::string Trainer::write_checkpoint(std::int64_t step, TraceFile& trace) {
  // The trace rows up to `step` reach the disk before the checkpoint of `step` becomes visible: a
  // crash in between leaves rows past the newest checkpoint, which a restart drops, never a gap.
  trace.event(step, TraceEvent::Checkpoint);
  trace.flush();
  crash_point("trace_flushed", step);
  const std::string path = checkpoint_path(settings_.output_prefix, step);
  save_checkpoint(path, settings_.deck, step, state_);
  crash_point("checkpoint_written", step);
  io::keep_newest_files(settings_.output_prefix + "_ckpt_", ".h5",
                        std::size_t(std::max(1, settings_.keep_checkpoints)));
  return path;
}

TrainSummary Trainer::run(std::int64_t start_step, TraceFile& trace,
                          const std::string& restarted_from) {
  install_stop_handlers();
  TrainSummary sum;
  sum.last_checkpoint = restarted_from;
  // What a stop at a non-finite value leaves to continue from.
  auto kept = [&sum]() {
    return sum.last_checkpoint.empty()
               ? std::string("no checkpoint was written before it")
               : "the last good checkpoint " + sum.last_checkpoint + " is kept";
  };
  sum.first_step = sum.last_step = start_step;
  sum.best_val_accuracy = kNaN;
  trace.event(start_step, start_step > 0 ? TraceEvent::Restart : TraceEvent::Start);

  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> record("hpt::train_record", 1);
  auto record_host = Kokkos::create_mirror_view(record);
  View2<real> features("hpt::train_features", 1, kFeatures);
  auto features_host = Kokkos::create_mirror_view(features);
  Kokkos::Timer timer;
  double last_print_time = 0;
  std::int64_t last_print_step = start_step;
  Evaluation last_val{kNaN, kNaN};

  for (std::int64_t step = start_step + 1; step <= settings_.steps; ++step) {
    Kokkos::Profiling::pushRegion("hpt::train_step");
    const MiniBatch& b = state_.dataset.next_batch(settings_.batch_size);
    const auto batch = model_batch(b.x, b.labels, b.targets);
    const LossValue lv = state_.model.forward(batch);
    if (!std::isfinite(lv.loss)) {
      Kokkos::Profiling::popRegion();
      std::cerr << "hpt: training stopped: the loss is not finite at step " << step
                << " (loss = " << lv.loss << "); " << kept() << "\n";
      sum.non_finite = true;
      trace.event(step, TraceEvent::NonFiniteStop, lv.loss);
      break;
    }
    state_.model.backward(batch);
    const double lr = schedule_(step - 1);
    const StepTelemetry t = state_.optimizer.step(lr);
    if (!t.applied) {
      Kokkos::Profiling::popRegion();
      std::cerr << "hpt: training stopped: the gradient norm is not finite at step " << step
                << " (norm = " << t.grad_norm << "); no update was applied; " << kept() << "\n";
      sum.non_finite = true;
      trace.event(step, TraceEvent::NonFiniteStop, t.grad_norm);
      break;
    }

    const bool validate =
        (settings_.val_every > 0 && step % settings_.val_every == 0) || step == settings_.steps;
    if (validate) {
      last_val = evaluate_validation();
      if (!(sum.best_val_accuracy >= last_val.accuracy)) sum.best_val_accuracy = last_val.accuracy;
    }

    // Telemetry record of this step into the device history (SPEC 1).
    TelemetryRecord r;
    r.step = step;
    r.phase = telemetry::kFull;
    r.steps_in_phase = step;
    r.has_loss = true;
    r.loss = lv.loss;
    r.has_val_loss = validate && std::isfinite(last_val.loss);
    r.val_loss = last_val.loss;
    r.has_grad = true;
    r.grad_norm = t.grad_norm;
    double lsum = 0, lsq = 0, lmin = 1e300, lmax = -1e300;
    for (double g : t.tensor_grad_norms) {
      const double l = std::log(std::max(g, 1e-30));
      lsum += l, lsq += l * l, lmin = std::min(lmin, l), lmax = std::max(lmax, l);
    }
    const double nt = double(std::max<std::size_t>(1, t.tensor_grad_norms.size()));
    r.grad_tensor_log_std = std::sqrt(std::max(0.0, lsq / nt - (lsum / nt) * (lsum / nt)));
    r.grad_tensor_log_range = t.tensor_grad_norms.empty() ? 0.0 : lmax - lmin;
    r.has_update = true;
    r.update_norm = t.update_norm;
    r.weight_norm = t.weight_norm;
    r.has_update_cos = state_.optimizer.step_count() > 1;
    r.update_cos = t.update_cos;
    r.lr = lr;
    r.effective_lr = t.effective_lr;
    r.moment_mean = t.moment1;
    r.moment_std = t.moment1_std;
    r.variance_mean = t.moment2;
    r.variance_std = t.moment2_std;
    r.beta1_pow = t.beta1_power;
    r.beta2_pow = t.beta2_power;
    record_host(0) = r;
    Kokkos::deep_copy(record, record_host);
    push_records(ExecSpace(), state_.history, View1<const TelemetryRecord>(record));
    state_.encoder.encode(state_.history, features);  // also updates the normaliser
    Kokkos::deep_copy(features_host, features);

    const double now = timer.seconds();
    TraceRow row;
    row.step = step;
    row.phase = telemetry::kFull;
    row.loss = lv.loss;
    row.val_loss = validate ? last_val.loss : kNaN;
    row.val_accuracy = validate ? last_val.accuracy : kNaN;
    row.grad_norm = t.grad_norm;
    row.update_norm = t.update_norm;
    row.weight_norm = t.weight_norm;
    row.update_cos = t.update_cos;
    row.lr = lr;
    row.wall_time = now;
    row.features.assign(features_host.data(), features_host.data() + kFeatures);
    trace.add(row);
    sum.last_step = step;
    sum.final_loss = lv.loss;
    Kokkos::Profiling::popRegion();

    if (step % settings_.print_every == 0 || step == settings_.steps) {
      const double rate = double(step - last_print_step) / std::max(1e-9, now - last_print_time);
      char line[256];
      char val[64] = "val -";
      if (std::isfinite(last_val.loss))
        std::snprintf(val, sizeof val, "val %.5f  acc %6.2f%%", last_val.loss,
                      100.0 * last_val.accuracy);
      std::snprintf(
          line, sizeof line, "step %8lld/%lld  loss %.5f  %s  lr %.4g  %.1f steps/s  ETA %s",
          static_cast<long long>(step), static_cast<long long>(settings_.steps), lv.loss, val, lr,
          rate, format_seconds(double(settings_.steps - step) / std::max(rate, 1e-9)).c_str());
      std::cout << line << std::endl;
      last_print_time = now;
      last_print_step = step;
    }
    if (const int sig = stop_signal_received()) {
      sum.stop_signal = sig;
      sum.last_checkpoint = write_checkpoint(step, trace);
      trace.event(step, TraceEvent::SignalStop, sig);
      std::cout << "stopped by signal " << sig << " after step " << step << "; checkpoint "
                << sum.last_checkpoint << " (continue with --set run.restart=auto)" << std::endl;
      break;
    }
    if (settings_.checkpoint_every > 0 && step % settings_.checkpoint_every == 0 &&
        step != settings_.steps)
      sum.last_checkpoint = write_checkpoint(step, trace);
  }
  if (!sum.non_finite && sum.stop_signal == 0 && sum.last_step > start_step) {
    trace.event(sum.last_step, TraceEvent::End);
    sum.last_checkpoint = write_checkpoint(sum.last_step, trace);
  }
  trace.flush();
  sum.seconds = timer.seconds();
  sum.final_val_loss = last_val.loss;
  sum.final_val_accuracy = last_val.accuracy;
  return sum;
}

}  // namespace hpt::train
