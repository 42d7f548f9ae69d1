#include "train/trainer.hpp"

#include <Kokkos_Core.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <limits>

#include "core/checksum.hpp"
#include "core/crash_point.hpp"
#include "io/atomic_file.hpp"
#include "train/data_parallel.hpp"
#include "train/progress_printer.hpp"
#include "train/step_policy.hpp"
#include "train/step_telemetry.hpp"
#include "train/stop_signal.hpp"

namespace hpt::train {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The digest `h` continued over a step's decisions as the trace records them: phase, backward,
// verdict, block_horizon (int64 each, in this order).
std::uint64_t add_decisions(std::uint64_t h, const TraceRow& r) {
  const std::int64_t d[4] = {r.phase, r.backward, r.verdict, r.block_horizon};
  return fnv1a(h, d, sizeof d);
}

}  // namespace

Trainer::Trainer(const TrainState& state, const LrSchedule& schedule,
                 const TrainerSettings& settings)
    : state_(state), schedule_(schedule), settings_(settings) {
  state_.model.reserve_batch(
      std::max(settings_.batch_size, evaluation_rows_reserved(state_.dataset)));
}

Evaluation Trainer::evaluate_validation() {
  return evaluate_validation_rows(state_.model, state_.dataset, state_.comm);
}

DataParallelRecord Trainer::data_parallel_record(const TrainSummary& sum) const {
  DataParallelRecord r;
  r.ranks = state_.comm.size();
  r.since_step = start_step_;
  r.checked_step = checked_step_;
  r.communication = state_.comm.counters().since(counters_at_start_);
  r.digests = sum.digests;
  return r;
}

std::string Trainer::write_checkpoint(std::int64_t step, TraceFile& trace, TrainSummary& sum) {
  Kokkos::Timer timer;
  // Data-parallel: one file, by rank 0, of the state every process holds (checked to be so).
  sum.digests = check_identical_state(state_.comm, state_.model.parameters().values(), decisions_);
  checked_step_ = step;
  // The trace rows up to `step` reach the disk before the checkpoint of `step` becomes visible: a
  // crash in between leaves rows past the newest checkpoint, which a restart drops, never a gap.
  trace.event(step, TraceEvent::Checkpoint);
  trace.set_data_parallel(data_parallel_record(sum));
  trace.flush();
  crash_point("trace_flushed", step);
  const std::string path = checkpoint_path(settings_.output_prefix, step);
  if (state_.comm.is_root()) save_checkpoint(path, settings_.deck, step, state_);
  crash_point("checkpoint_written", step);
  if (state_.comm.is_root())
    io::keep_newest_files(settings_.output_prefix + "_ckpt_", ".h5",
                          std::size_t(std::max(1, settings_.keep_checkpoints)));
  sum.seconds_checkpoints += timer.seconds();
  return path;
}

TrainSummary Trainer::run(std::int64_t start_step, TraceFile& trace,
                          const std::string& restarted_from) {
  install_stop_handlers();
  start_step_ = start_step;
  counters_at_start_ = state_.comm.counters();
  decisions_ = kChecksumStart;
  checked_step_ = -1;
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

  std::unique_ptr<StepPolicy> full_training;
  if (!state_.policy) full_training = make_full_training_policy(state_, schedule_);
  StepPolicy& policy = state_.policy ? *state_.policy : *full_training;
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
    StepOutcome s = policy.run(step, settings_.batch_size);
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

    // A real step's telemetry into the device history, then the encoder (which updates its
    // normaliser) and the forecaster; a step without a backward pass only logs its loss.
    part.reset();
    if (s.real) {
      record_host(0) = step_record(step, s, val, state_.optimizer.step_count());
      Kokkos::deep_copy(record, record_host);
      push_records(ExecSpace(), state_.history, View1<const TelemetryRecord>(record));
      state_.encoder.encode(state_.history, features);
      Kokkos::deep_copy(features_host, features);
    }
    sum.seconds_encode += part.seconds();
    if (state_.forecaster) {
      if (s.real)
        state_.forecaster->after_step(step, s.loss.loss, features, state_.history);
      else
        state_.forecaster->log_loss(step, s.loss.loss);
      for (const ForecastRow& f : state_.forecaster->take_scored()) trace.add_forecast(f);
    }
    policy.after_step(step, s, features);
    bool restored = s.verdict < 0;
    for (const PolicyEvent& e : policy.take_events()) {
      trace.event(e.step, e.kind, e.value);
      restored = restored || e.kind == TraceEvent::DivergenceCritical;
      if (!e.message.empty()) std::cout << "hpt: " << e.message << std::endl;
    }
    // A validation made before the parameters were restored describes a state the run left.
    if (val.done && restored) {
      last_val = evaluate_validation();
      val.loss = last_val.loss, val.accuracy = last_val.accuracy;
    }
    if (s.real) ++sum.backward_passes;
    sum.real_steps.push_back(s.real ? kRealStep : (s.drew_batch ? kForwardStep : kFrozenStep));
    const double now = timer.seconds();
    if (val.done)
      sum.validations.push_back({step, sum.backward_passes, val.loss, val.accuracy, now});

    const TraceRow row =
        step_trace_row(step, s, val, now, {features_host.data(), features_host.data() + kFeatures});
    decisions_ = add_decisions(decisions_, row);
    trace.add(row);
    sum.last_step = step;
    if (std::isfinite(s.loss.loss)) sum.final_loss = s.loss.loss;
    Kokkos::Profiling::popRegion();

    progress.maybe_print(step, now, s.loss.loss, !s.real, last_val.loss, last_val.accuracy, s.lr);
    if (const int sig = stop_signal_of_root(state_.comm, stop_signal_received())) {
      sum.stop_signal = sig;
      sum.last_checkpoint = write_checkpoint(step, trace, sum);
      trace.event(step, TraceEvent::SignalStop, sig);
      std::cout << "stopped by signal " << sig << " after step " << step << "; checkpoint "
                << sum.last_checkpoint << " (continue with --set run.restart=auto)" << std::endl;
      break;
    }
    if (settings_.checkpoint_every > 0 && step % settings_.checkpoint_every == 0 &&
        step != settings_.steps)
      sum.last_checkpoint = write_checkpoint(step, trace, sum);
  }
  if (!sum.non_finite && sum.stop_signal == 0 && sum.last_step > start_step) {
    trace.event(sum.last_step, TraceEvent::End);
    sum.last_checkpoint = write_checkpoint(sum.last_step, trace, sum);
  }
  sum.communication = state_.comm.counters().since(counters_at_start_);
  trace.set_data_parallel(data_parallel_record(sum));
  trace.flush();
  sum.seconds = timer.seconds();
  sum.final_val_loss = last_val.loss;
  sum.final_val_accuracy = last_val.accuracy;
  sum.policy_report = policy.report(double(sum.backward_passes));
  sum.policy_counters = policy.counters();
  if (state_.forecaster) {
    sum.seconds_filter = state_.forecaster->seconds_filter;
    sum.seconds_train = state_.forecaster->seconds_train;
    sum.seconds_forecast = state_.forecaster->seconds_forecast;
  }
  return sum;
}

}  // namespace hpt::train
