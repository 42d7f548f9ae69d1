#pragma once
// The per-step trace of a training run (docs/outputs.md#train-trace): a table of telemetry, one row
// per step, and an event log, in an HDF5 file that is only ever replaced atomically. Rows are
// buffered in memory and written at each flush (checkpoints, end, stop): the file is copied to a
// temporary, extended and renamed into place, so a crash leaves the previous complete trace, and
// memory stays bounded by the flush interval. /features holds the encoder's 64 features of every
// step, row i for step row i; /data_parallel the processes' communication and digests.
#include <cstdint>
#include <string>
#include <vector>

#include "core/communication_counters.hpp"
#include "train/data_parallel.hpp"
#include "train/training_forecaster.hpp"

namespace hpt::train {

// The trace's /data_parallel group: the processes, what their collectives cost, and their digests.
struct DataParallelRecord {
  int ranks = 1;
  std::int64_t since_step = 0;     // the counters cover the steps after this one (a restart's)
  std::int64_t checked_step = -1;  // the step of the digests (-1: none yet)
  CommunicationCounters communication;
  RankDigests digests;
};

struct TraceRow {
  std::int64_t step = 0;
  std::int64_t phase = 1;                           // telemetry::PhaseCode
  double loss = 0, val_loss = 0, val_accuracy = 0;  // NaN where not computed this step
  double grad_norm = 0, update_norm = 0, weight_norm = 0, update_cos = 0, lr = 0;
  double wall_time = 0;            // seconds since the run (or the restarted run) began
  std::int64_t backward = 1;       // 1 when the step had a backward pass
  std::int64_t block_horizon = 0;  // hybrid: length of the predict block the step belongs to
  double forecast_mean = 0, forecast_hi = 0;  // hybrid: the block's forecast of log L (NaN: none)
  double confidence = 0;         // hybrid: std / improvement of the newest entry decision
  std::int64_t verdict = 0;      // hybrid: +1 block accepted, -1 rolled back at this step
  std::vector<double> features;  // the encoder's normalised features of this step (kFeatures)
};

enum class TraceEvent : std::int64_t {
  Start = 0,
  Restart = 1,
  Checkpoint = 2,
  SignalStop = 3,
  NonFiniteStop = 4,
  End = 5,
  PredictStart = 6,         // value: the block's horizon
  PredictAccepted = 7,      // value: probe loss after / before the block
  Rollback = 8,             // value: probe loss after / before the block
  DivergenceWarning = 9,    // value: the step's loss
  DivergenceCritical = 10,  // value: the step's loss (parameters restored from the last snapshot)
  PredictStepScale = 11     // value: the fraction of the block's predicted motion verified
};

class TraceFile {
 public:
  // A new trace at `path` (replacing any), or with resume_step >= 0 the existing trace truncated to
  // the rows with step <= resume_step (a restart continues it). InputError when that file is not a
  // trace. An empty path writes nothing (the processes of a data-parallel run other than rank 0).
  TraceFile(std::string path, std::string deck, std::int64_t resume_step);
  void add(const TraceRow& row) { rows_.push_back(row); }
  // A scored forecast of the training forecaster (table /forecasts).
  void add_forecast(const ForecastRow& row) { forecasts_.push_back(row); }
  void event(std::int64_t step, TraceEvent kind, double value = 0.0);
  // Replaces the /data_parallel group at the next flush.
  void set_data_parallel(const DataParallelRecord& record);
  // Writes the buffered rows and events (atomically, see above).
  void flush();
  const std::string& path() const { return path_; }
  std::size_t buffered() const { return rows_.size(); }

  static const std::vector<std::string>& column_names();

 private:
  struct Event {
    std::int64_t step;
    TraceEvent kind;
    double value;
  };
  std::string path_, deck_;
  std::vector<TraceRow> rows_;
  std::vector<ForecastRow> forecasts_;
  std::vector<Event> events_;
  DataParallelRecord data_parallel_;
  bool data_parallel_pending_ = false;
};

}  // namespace hpt::train
