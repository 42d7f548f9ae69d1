#include "train/trainer.hpp"

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/crash_point.hpp"
#include "io/atomic_file.hpp"
#include "train/progress_printer.hpp"
#include "train/step_policy.hpp"
#include "train/step_telemetry.hpp"
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

  const auto policy = make_full_training_policy(state_, schedule_);
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> record("hpt::train_record", 1);
  auto record_host = Kokkos::create_mirror_view(record);
  View2<real> features("hpt::train_features", 1, kFeatures);
  auto features_host = Kokkos::create_mirror_view(features);
  Kokkos::Timer timer;
  ProgressPrinter progress(settings_.steps, settings_.print_every, start_step);
  Evaluation last_val{kNaN, kNaN};

  for (std::int64_t step = start_step + 1; step <= settings_.steps; ++step) {
    Kokkos::Profiling::pushRegion("hpt::train_step");
    Kokkos::Timer part;
    const StepOutcome s = policy->run(step, settings_.batch_size);
    Kokkos::fence();
    sum.seconds_steps += part.seconds();
    if (s.non_finite) {
      Kokkos::Profiling::popRegion();
      std::cerr << "hpt: training stopped: the " << s.non_finite_what << " is not finite at step "
                << step << " (" << s.non_finite_what << " = " << s.non_finite_value << "); "
                << (s.non_finite_what == "loss" ? "" : "no update was applied; ") << kept() << "\n";
      sum.non_finite = true;
      trace.event(step, TraceEvent::NonFiniteStop, s.non_finite_value);
      break;
    }

    StepValidation val;
    val.done =
        (settings_.val_every > 0 && step % settings_.val_every == 0) || step == settings_.steps;
    if (val.done) {
      last_val = evaluate_validation();
      if (!(sum.best_val_accuracy >= last_val.accuracy)) sum.best_val_accuracy = last_val.accuracy;
    }
    val.loss = last_val.loss, val.accuracy = last_val.accuracy;

    // The step's telemetry into the device history, then the encoder (which updates its
    // normaliser).
    part.reset();
    record_host(0) = step_record(step, s, val, state_.optimizer.step_count());
    Kokkos::deep_copy(record, record_host);
    push_records(ExecSpace(), state_.history, View1<const TelemetryRecord>(record));
    state_.encoder.encode(state_.history, features);
    Kokkos::deep_copy(features_host, features);
    sum.seconds_encode += part.seconds();
    if (state_.forecaster) {
      state_.forecaster->after_step(step, s.loss.loss, features, state_.history);
      for (const ForecastRow& f : state_.forecaster->take_scored()) trace.add_forecast(f);
    }

    const double now = timer.seconds();
    trace.add(step_trace_row(step, s, val, now,
                             {features_host.data(), features_host.data() + kFeatures}));
    sum.last_step = step;
    sum.final_loss = s.loss.loss;
    Kokkos::Profiling::popRegion();

    progress.maybe_print(step, now, s.loss.loss, last_val.loss, last_val.accuracy, s.lr);
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
