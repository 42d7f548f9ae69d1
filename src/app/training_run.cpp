#include "app/training_run.hpp"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <memory>
#include <sstream>

#include "app/output_location.hpp"
#include "core/communicator.hpp"
#include "core/config_lists.hpp"
#include "core/registry.hpp"
#include "forecast/pretrain_options.hpp"
#include "io/console.hpp"
#include "io/dataset_files.hpp"
#include "io/hdf5_format.hpp"
#include "io/level_model_file.hpp"
#include "physics-style-modules/dataset/register.hpp"
#include "physics-style-modules/dynamics/rssm.hpp"
#include "physics-style-modules/dynamics/rssm_prototype.hpp"
#include "physics-style-modules/encoder/register.hpp"
#include "physics-style-modules/model/register.hpp"
#include "physics-style-modules/optimizer/register.hpp"
#include "train/hybrid_controllers.hpp"
#include "train/training_forecaster.hpp"
#include "train/training_options.hpp"

namespace hpt::app {

namespace {

std::string output_prefix(const RunContext& ctx) {
  return ctx.output_dir + "/" + ctx.output_name;
}

// The checkpoints a restart may use, in the order to try them: none for a fresh start, the given
// file, or with `auto` every checkpoint of the run, newest first.
std::vector<std::string> restart_candidates(const RunContext& ctx) {
  const std::string r = ctx.config.get_string("run.restart");
  if (r.empty()) return {};
  if (r == "auto") return train::checkpoints_newest_first(output_prefix(ctx));
  return {r};
}

// The level model of forecast.pretrained for train.forecast_style = learned (InputError naming the
// keys when there is none or it is bad).
forecast::LevelModel learned_model(const Config& c) {
  const std::string path = forecast::pretrained_model_path(c);
  if (path.empty())
    throw InputError(
        "train.forecast_style = learned with forecast.pretrained = none: expected a level model "
        "(forecast.pretrained = default or a file written by run.mode = pretrain)");
  return io::load_level_model(path, "forecast.pretrained");
}

void warn_damaged(const std::string& why) {
  std::cerr << "hpt: warning: " << why << "; falling back to the next older checkpoint\n";
}

}  // namespace

void check_training_inputs(const RunContext& ctx) {
  if (ctx.config.get_string("train.forecast_style") == "learned") learned_model(ctx.config);
  const std::string& update = ctx.config.get_string("update.style");
  if (ctx.config.get_string("update.snapshots") == "anchors" && update != "linear" &&
      update != "quadratic")
    throw InputError(
        "update.snapshots = 'anchors' applies to update.style = linear or quadratic "
        "only (here '" +
        update + "'); use update.snapshots = every");
  if (update == "trend" && ctx.config.get_int("update.lag") < 2)
    throw InputError("update.lag = " + std::to_string(ctx.config.get_int("update.lag")) +
                     " with update.style = trend: expected at least 2 (the time constant of "
                     "the fit in steps)");
  const double val = ctx.config.get_real("dataset.val_fraction"),
               probe = ctx.config.get_real("dataset.probe_fraction");
  if (val + probe >= 1.0) {
    std::ostringstream msg;
    msg << "dataset.probe_fraction = " << probe << " with dataset.val_fraction = " << val
        << " leaves no training rows: expected a sum below 1";
    throw InputError(msg.str());
  }
  parse_positive_reals(ctx.config.get_string("predict.step_scales"), "predict.step_scales",
                       "1,0.5,0.25");
  dataset_file_path(ctx.config);  // throws InputError naming dataset.path when missing
  check_output_file(ctx.output_path("_trace.h5"), "output.name", ctx.output_dir);
  const bool automatic = ctx.config.get_string("run.restart") == "auto";
  std::string reasons;
  for (const std::string& ck : restart_candidates(ctx)) {
    try {
      io::open_hpt_file(ck, io::HptFileKind::Checkpoint);
      return;
    } catch (const InputError& e) {
      if (!automatic)
        throw InputError("run.restart = '" + ctx.config.get_string("run.restart") +
                         "': " + e.what());
      reasons += std::string("\n  ") + e.what();
    }
  }
  if (!reasons.empty())
    throw InputError("run.restart = auto: no checkpoint of " + output_prefix(ctx) +
                     " can be read:" + reasons);
}

namespace {

// The model's input and output sizes must be the data set's: a mismatch names both.
void check_model_fits_data(const Config& c, const Model& model, const Dataset& dataset) {
  if (model.input_size() == dataset.features() && model.output_size() == dataset.outputs()) return;
  // Classes come from the largest label: name the row that holds it, the usual culprit.
  const std::string classes_origin =
      dataset.largest_label_row() < 0
          ? std::string()
          : " (classes = largest label + 1; the largest label, " +
                std::to_string(dataset.outputs() - 1) + ", is in row " +
                std::to_string(dataset.largest_label_row()) + " of " + dataset.source() + ")";
  throw InputError("model.layers = '" + c.get_string("model.layers") + "' maps " +
                   std::to_string(model.input_size()) + " inputs to " +
                   std::to_string(model.output_size()) + " outputs, but dataset '" +
                   dataset.style() + "' has " + std::to_string(dataset.features()) +
                   " features and " + std::to_string(dataset.outputs()) + " outputs" +
                   classes_origin + "; set the first and last layer sizes to these");
}

// Everything one training run is made of, built from the deck's styles in dependency order.
class TrainingSetup {
 public:
  TrainingSetup(const Config& c, const std::vector<char>* replay);

  train::TrainState& state() { return *state_; }
  const LrSchedule& schedule() const { return schedule_; }
  const Dataset& dataset() const { return *dataset_; }
  const Model& model() const { return *model_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  const train::StepPolicy& policy() const { return *policy_; }
  const train::TrainingForecaster* forecaster() const { return forecaster_.get(); }
  const RssmDynamics* dynamics() const { return dynamics_.get(); }
  const PrototypeRssm* prototype_rssm() const { return prototype_rssm_.get(); }
  bool hybrid() const { return hybrid_; }
  int ranks() const { return state_->comm.size(); }

 private:
  void build_forecaster(const Config& c);
  void build_policy(const Config& c, const std::vector<char>* replay);

  bool hybrid_;
  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Optimizer> optimizer_;
  std::unique_ptr<Encoder> encoder_;
  Encoder::History history_;
  LrSchedule schedule_;
  std::unique_ptr<train::TrainState> state_;
  std::unique_ptr<RssmDynamics> dynamics_;
  std::unique_ptr<train::TrainingForecaster> forecaster_;
  std::unique_ptr<PrototypeRssm> prototype_rssm_;
  std::unique_ptr<train::StepPolicy> policy_;
};

template <class Base>
std::unique_ptr<Base> build_style(const Config& c, const std::string& family,
                                  void (*register_styles)(Registry<Base>&)) {
  Registry<Base> styles(family);
  register_styles(styles);
  return styles.create(c.get_string(family + ".style"), c);
}

std::unique_ptr<Dataset> build_dataset(const Config& c) {
  Registry<Dataset> datasets("dataset");
  register_dataset_styles(datasets, io::read_dataset_file);
  return datasets.create(c.get_string("dataset.style"), c);
}

TrainingSetup::TrainingSetup(const Config& c, const std::vector<char>* replay)
    : hybrid_(replay == nullptr && c.get_string("train.hybrid") == "on"),
      dataset_(build_dataset(c)),
      model_(build_style<Model>(c, "model", register_model_styles)),
      optimizer_(build_style<Optimizer>(c, "optimizer", register_optimizer_styles)),
      encoder_(build_style<Encoder>(c, "encoder", register_encoder_styles)),
      history_(encoder_->create_history(1)),
      schedule_(make_lr_schedule(c, c.get_real("optimizer.lr"), long(c.get_int("train.steps")))) {
  check_model_fits_data(c, *model_, *dataset_);
  model_->initialize(std::uint64_t(c.get_int("run.seed")));
  optimizer_->bind(model_->parameters());
  encoder_->prepare(1);
  state_ = std::make_unique<train::TrainState>(train::TrainState{
      *model_, *optimizer_, *dataset_, history_, *encoder_, train::dataset_identity(*dataset_)});
  dataset_->set_shard(state_->comm.rank(), state_->comm.size());
  build_forecaster(c);
  build_policy(c, replay);
  state_->policy = policy_.get();
}

void TrainingSetup::build_forecaster(const Config& c) {
  if (hybrid_ && train::uses_prototype_rssm(c.get_string("hybrid.controller"))) {
    prototype_rssm_ = std::make_unique<PrototypeRssm>(prototype_rssm_options(c));
  } else if (c.get_bool("train.forecaster") || hybrid_) {
    dynamics_ = std::make_unique<RssmDynamics>(c);
    train::TrainingForecastSettings settings = train::read_training_forecast_settings(c);
    if (c.get_string("train.forecast_style") == "learned") {
      settings.level_model = learned_model(c);
      // Step s (counted from 1, as the trace does) trains at the schedule's rate of s - 1.
      for (long s = 0; s <= long(c.get_int("train.steps")); ++s)
        settings.planned_lr.push_back(schedule_.lr(std::max(0L, s - 1)));
    }
    forecaster_ = std::make_unique<train::TrainingForecaster>(*dynamics_, *encoder_, settings);
    state_->forecaster = forecaster_.get();
  }
}

void TrainingSetup::build_policy(const Config& c, const std::vector<char>* replay) {
  if (hybrid_) {
    train::ControllerRegistry controllers("hybrid controller", "hybrid.controller");
    train::register_hybrid_controllers(controllers);
    const train::ControllerInputs in{*state_, schedule_, c.get_int("train.steps"),
                                     prototype_rssm_.get()};
    policy_ = controllers.create(c.get_string("hybrid.controller"), c, in);
  } else if (replay) {
    policy_ = train::make_replay_policy(*state_, schedule_, *replay);
  } else {
    policy_ = train::make_full_training_policy(*state_, schedule_);
  }
}

// Continues from the first readable checkpoint of run.restart; returns (step, file), or (0, "").
std::pair<std::int64_t, std::string> restore(const RunContext& ctx, train::TrainState& state) {
  const auto candidates = restart_candidates(ctx);
  for (const std::string& ck : candidates) {
    try {
      return {train::load_checkpoint(ck, state), ck};
    } catch (const train::DamagedCheckpoint& e) {
      if (ctx.config.get_string("run.restart") != "auto" || ck == candidates.back()) throw;
      warn_damaged(e.what());
    }
  }
  return {0, ""};
}

// A checkpoint written by another number of processes continues with the same global batches;
// only the order of the sums changes (docs/mpi.md). Says so, or "" for the same number.
std::string ranks_change_note(const std::string& checkpoint, int ranks) {
  const std::int64_t written = train::checkpoint_ranks(checkpoint);
  if (written == ranks) return "";
  return "the checkpoint was written by " + std::to_string(written) +
         " process(es), this run has " + std::to_string(ranks) +
         ": the same global batches, summed in another order (equal within float rounding, not "
         "bit for bit)\n";
}

void print_run_header(const RunContext& ctx, TrainingSetup& setup, std::int64_t start,
                      const std::string& restart) {
  if (!restart.empty())
    std::cout << "restarting from " << restart << " at step " << start << "\n"
              << ranks_change_note(restart, setup.ranks());
  else if (ctx.config.get_string("run.restart") == "auto")
    std::cout << "run.restart = auto: no checkpoint of this run yet, starting at step 0\n";
  std::cout << "dataset   " << setup.dataset().summary() << "\n"
            << "model     " << setup.model().summary() << "\n"
            << "optimizer " << setup.optimizer().summary() << ", " << setup.schedule().summary()
            << "\n"
            << "steps     " << setup.policy().name() << "\n";
}

// "1.234 MB in 56 calls, 0.01 s" (payload bytes).
std::string communication_text(const CollectiveCount& c) {
  return io::fmt(double(c.bytes) / 1e6, 4) + " MB in " + std::to_string(c.calls) + " calls, " +
         io::fmt(c.seconds, 4) + " s";
}

void add_time_rows(io::TextTable& table, const train::TrainSummary& s, double done) {
  table.add_row({"wall time", io::fmt(s.seconds, 4) + " s"});
  table.add_row({"steps/s", io::fmt(done / std::max(1e-9, s.seconds), 4)});
  const double per_step = 1e3 / std::max(1.0, done);
  table.add_row({"real step (forward, backward, update)",
                 io::fmt(s.seconds_steps * per_step, 4) + " ms/step"});
  table.add_row({"telemetry + encode", io::fmt(s.seconds_encode * per_step, 4) + " ms/step"});
  table.add_row({"checkpoints (with trace flushes)", io::fmt(s.seconds_checkpoints, 4) + " s"});
}

// Data-parallel runs: the processes, what their collectives cost (the same counts on each; rank
// 0's seconds), and the check that every process holds the same parameters.
void add_data_parallel_rows(io::TextTable& table, const train::TrainSummary& s, int ranks) {
  if (ranks == 1) return;
  table.add_row({"processes (data-parallel)", std::to_string(ranks)});
  table.add_row(
      {"collectives of parameters and gradients", Communicator::world().device_buffers()});
  for (int k = 0; k < kTrafficKinds; ++k) {
    const CollectiveCount& c = s.communication[Traffic(k)];
    table.add_row(
        {std::string("communication: ") + traffic_name(Traffic(k)), communication_text(c)});
  }
  table.add_row({"communication: total", communication_text(s.communication.total())});
  if (s.digests.parameters.empty()) return;
  char checksum[24];
  std::snprintf(checksum, sizeof checksum, "%016llx",
                static_cast<unsigned long long>(s.digests.parameters.front()));
  table.add_row({"parameters and decisions on every process",
                 std::string("identical, checksum ") + checksum});
}

void add_forecaster_rows(io::TextTable& table, const train::TrainingForecaster& f, double done) {
  const double per = 1e3 / std::max(1.0, done);
  table.add_row({"forecaster: filter", io::fmt(f.seconds_filter * per, 4) + " ms/step"});
  table.add_row({"forecaster: online training", io::fmt(f.seconds_train * per, 4) + " ms/step"});
  table.add_row(
      {"forecaster: forecasts (rollouts)", io::fmt(f.seconds_forecast * per, 4) + " ms/step"});
}

void print_summary(const TrainingSetup& setup, const train::TrainSummary& s,
                   const std::string& trace_path) {
  const double done = double(s.last_step - s.first_step);
  io::TextTable table({"quantity", "value"});
  table.add_row({"steps", std::to_string(s.first_step) + " -> " + std::to_string(s.last_step)});
  table.add_row({"final minibatch loss", io::fmt(s.final_loss, 6)});
  table.add_row({"final validation loss", io::fmt(s.final_val_loss, 6)});
  table.add_row({"final validation accuracy", io::fmt(100 * s.final_val_accuracy, 5) + " %"});
  table.add_row({"best validation accuracy", io::fmt(100 * s.best_val_accuracy, 5) + " %"});
  add_time_rows(table, s, done);
  add_data_parallel_rows(table, s, setup.ranks());
  table.add_row({"backward passes", std::to_string(s.backward_passes) + " of " +
                                        std::to_string(s.last_step - s.first_step) + " steps"});
  if (setup.hybrid())
    table.add_row({"skip ratio (steps without a backward pass)",
                   io::fmt(1.0 - double(s.backward_passes) / std::max(1.0, done), 4)});
  for (const auto& [k, v] : s.policy_report) table.add_row({k, v});
  table.add_row({"last checkpoint", s.last_checkpoint.empty() ? "-" : s.last_checkpoint});
  table.add_row({"trace", trace_path});
  if (setup.forecaster()) add_forecaster_rows(table, *setup.forecaster(), done);
  std::cout << "\nsummary\n" << table.str();
}

void print_forecaster_scores(const Config& c, const TrainingSetup& setup) {
  if (!setup.forecaster()) return;
  io::TextTable ft({"horizon", "forecasts scored", "mean |error| log L", "90% coverage"});
  for (const auto& h : setup.forecaster()->scores())
    ft.add_row({std::to_string(h.horizon), std::to_string(h.scored), io::fmt(h.mean_abs_error, 4),
                io::fmt(h.coverage, 4)});
  if (c.get_string("train.forecast_style") == "learned")
    std::cout << "\nforecaster (the pretrained level forecaster of forecast.pretrained; intervals "
                 "calibrated online)\n";
  else
    std::cout << "\nforecaster (" << setup.dynamics()->members() << " members, H "
              << setup.dynamics()->hidden() << ", online BPTT over " << c.get_int("dynamics.bptt")
              << " steps; intervals calibrated online)\n";
  std::cout << ft.str();
}

}  // namespace

train::TrainSummary train_run(const RunContext& ctx, const std::vector<char>* replay) {
  const Config& c = ctx.config;
  TrainingSetup setup(c, replay);
  const auto [start, restart] = restore(ctx, setup.state());
  print_run_header(ctx, setup, start, restart);
  // Only rank 0 of a data-parallel run writes (the trace here, checkpoints in the trainer).
  train::TraceFile trace(setup.state().comm.is_root() ? ctx.output_path("_trace.h5") : "",
                         ctx.resolved_ini, restart.empty() ? -1 : start);
  train::Trainer trainer(setup.state(), setup.schedule(),
                         train::read_trainer_settings(c, output_prefix(ctx), ctx.resolved_ini));
  train::TrainSummary s = trainer.run(start, trace, restart);
  if (setup.prototype_rssm()) {  // the parity loop's own forecaster (it has no filter step)
    s.seconds_train = setup.prototype_rssm()->seconds_train;
    s.seconds_forecast = setup.prototype_rssm()->seconds_forecast;
  }
  print_summary(setup, s, trace.path());
  print_forecaster_scores(c, setup);
  return s;
}

}  // namespace hpt::app
