#pragma once
// The step loop over minibatches: the step policy (full training, hybrid, replay) makes each step;
// around it the trainer records telemetry (docs/method.md), validates, prints progress, writes
// trace rows and periodic checkpoints, and stops cleanly on SIGTERM/SIGUSR1.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/communicator.hpp"
#include "train/checkpoint.hpp"
#include "train/data_parallel.hpp"
#include "train/evaluation.hpp"
#include "train/lr_schedule.hpp"
#include "train/trace_file.hpp"

namespace hpt::train {

struct TrainerSettings {
  std::int64_t steps = 1000;  // total steps of the run (a restart continues up to it)
  int batch_size = 32;
  int val_every = 100;  // validation every this many steps (and at the last step)
  int print_every = 100;
  int checkpoint_every = 0;  // 0: only at the end and on a stop signal
  int keep_checkpoints = 3;
  std::string output_prefix;  // "out/digits": checkpoints are <prefix>_ckpt_<step>.h5
  std::string deck;           // stored in every checkpoint
};

// A validation of the run: after `backward` backward passes (counted from the run's start or
// restart).
struct ValidationPoint {
  std::int64_t step = 0, backward = 0;
  double loss = 0, accuracy = 0;
  double seconds = 0;  // wall time since the step loop began (this run's part, after a restart)
};

struct TrainSummary {
  std::int64_t first_step = 0, last_step = 0;  // steps completed: (first_step, last_step]
  double final_loss = 0, final_val_loss = 0, final_val_accuracy = 0, best_val_accuracy = 0;
  double seconds = 0;
  // Where the time went (fenced timers): the step policy's steps, telemetry push + encoding.
  double seconds_steps = 0, seconds_encode = 0;
  double seconds_checkpoints = 0;  // writing checkpoints (with the trace flushes before them)
  int stop_signal = 0;             // the signal that stopped the run early, or 0
  bool non_finite = false;         // stopped at a non-finite loss or gradient
  std::string last_checkpoint;
  std::int64_t backward_passes = 0;  // steps of this run (since its start or restart) that had one
  std::vector<ValidationPoint> validations;
  std::vector<char> real_steps;  // per step of this run: its StepKind
  std::vector<std::pair<std::string, std::string>> policy_report;
  std::vector<std::pair<std::string, double>> policy_counters;
  // Seconds (fenced) of the forecaster's parts: filter, online training, forecasts (rollouts).
  double seconds_filter = 0, seconds_train = 0, seconds_forecast = 0;
  // The collectives of this process during the run (none on one process), and every process's
  // digests of its parameters and decisions at the last checkpoint (checked equal).
  CommunicationCounters communication;
  RankDigests digests;
};

class Trainer {
 public:
  Trainer(const TrainState& state, const LrSchedule& schedule, const TrainerSettings& settings);
  // Trains from `start_step` completed steps to settings.steps; `restarted_from` is the checkpoint
  // the state was loaded from ("" for a fresh start).
  TrainSummary run(std::int64_t start_step, TraceFile& trace, const std::string& restarted_from);
  Evaluation evaluate_validation();

 private:
  std::string write_checkpoint(std::int64_t step, TraceFile& trace, TrainSummary& sum);
  // What the trace records of the processes: counters since the loop began, the last digests.
  DataParallelRecord data_parallel_record(const TrainSummary& sum) const;
  TrainState state_;
  LrSchedule schedule_;
  TrainerSettings settings_;
  std::int64_t start_step_ = 0;
  CommunicationCounters counters_at_start_;  // the communicator's counters when run() began
  std::uint64_t decisions_ = 0;              // FNV-1a of the trace's decision columns so far
  std::int64_t checked_step_ = -1;           // the step of sum.digests (-1: none yet)
};

}  // namespace hpt::train
