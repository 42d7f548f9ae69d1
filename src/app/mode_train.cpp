#include "app/mode_train.hpp"

#include <iostream>
#include <sstream>

#include "core/registry.hpp"
#include "io/console.hpp"
#include "io/dataset_files.hpp"
#include "io/hdf5_format.hpp"
#include "app/deck_lists.hpp"
#include "app/mode_forecast.hpp"
#include "app/output_location.hpp"
#include "modules/dataset/register.hpp"
#include "modules/encoder/register.hpp"
#include "modules/model/register.hpp"
#include "modules/optimizer/register.hpp"
#include "modules/dynamics/rssm.hpp"
#include "modules/update/register.hpp"
#include "modules/dynamics/rssm_original.hpp"
#include "train/hybrid_policy.hpp"
#include "train/original_policy.hpp"
#include "train/trainer.hpp"
#include "train/training_forecaster.hpp"

namespace hpt::app {

void declare_train_options(OptionSchema& s) {
  s.add_int("train.steps", 1000, "training steps (optimizer updates) of the run", 1);
  s.add_int("train.batch_size", 32, "minibatch rows", 1, 1 << 24);
  s.add_int("train.val_every", 100, "validation on the whole held-out part every this many steps",
            1);
  s.add_bool("train.forecaster", false,
             "train the RSSM forecaster online along the run ([dynamics]) and score its calibrated "
             "forecasts at forecast.horizons every forecast.every steps (trace /forecasts)");
  s.add_choice("train.hybrid", "off", {"off", "on"},
               "on: the hybrid loop skips backward passes with verified predicted updates "
               "(docs/method.md; implies train.forecaster = on); off: full training, the baseline");
  s.add_choice("hybrid.controller", "hpt", {"hpt", "original"},
               "hpt: verified predict blocks (docs/method.md#hybrid-training-loop); original: the "
               "prototype's schedule and confidence, for comparison (needs dynamics.style = "
               "rssm_original, encoder.style = original, gru.reset = before, update.style = none)");
  s.add_real("original.threshold", 0.85,
             "hybrid.controller = original: confidence that opens a predict block", 0.0, 1.0);
  s.add_int("original.max_predict", 15,
            "hybrid.controller = original: longest predict block (the shortest is 10)", 1, 1 << 20);
  s.add_int("hybrid.warmup", 100, "real steps before the first predict decision", 0);
  s.add_int("hybrid.full_steps", 20, "length of a Full block (real steps)", 1, 1 << 30);
  s.add_int("hybrid.correct_steps", 5, "length of a Correct block after an accepted predict block",
            1, 1 << 30);
  s.add_int("hybrid.max_predict_blocks", 5, "predict blocks in a row before a Full block", 1,
            1 << 30);
  s.add_int("hybrid.lr_halve_steps", 50,
            "steps at half learning rate after a critical divergence alarm", 0, 1 << 30);
  s.add_real("monitor.sigma", 3.0,
             "divergence monitor: a loss this many running standard deviations from its running "
             "mean warns (a Full block), twice as many is critical (restore the last snapshot, "
             "halve the learning rate); raise it where full training's own loss spikes",
             0.01, 1e12);
  s.add_real("monitor.grad_explode", 100.0,
             "divergence monitor: a gradient norm this many times its early level warns, ten "
             "times as many is critical",
             1.0, 1e12);
  s.add_real("monitor.grad_vanish", 0.01,
             "divergence monitor: a gradient norm below this fraction of its early level warns "
             "(no predict block while it lasts; never critical); 0 turns the check off",
             0.0, 1.0);
  s.add_int("monitor.escalate_after", 3,
            "divergence monitor: this many divergent warnings in a row are critical (0: never)", 0,
            1 << 30);
  s.add_int("predict.max_horizon", 50,
            "longest predict block; its horizons are those of forecast.horizons up to this", 1,
            1 << 20);
  s.add_real("predict.tol", 0.01,
             "accept a predict block when the probe loss is <= (1 + tol) x the loss before it "
             "(and within the forecast's 95 % bound); a negative tol demands an improvement",
             -1.0, 10.0);
  s.add_real("predict.confidence", 1.0,
             "enter a predict block of Y steps when the forecast std of log L at Y is <= this x "
             "the forecast improvement of log L",
             0.0, 1e6);
  s.add_real("predict.min_coverage", 0.8,
             "enter only at horizons whose scored 90 % intervals covered at least this fraction",
             0.0, 1.0);
  s.add_int("predict.min_scored", 5, "forecasts scored at a horizon before its coverage counts", 0,
            1 << 30);
  s.add_int("predict.retry_after", 0,
            "real steps without a rollback after which the horizon cap, halved by a rollback, "
            "doubles again (0: only an accepted block raises it, so a rollback at the shortest "
            "horizon ends predicting for the run)",
            0, 1 << 30);
  s.add_string(
      "predict.step_scales", "1",
      "fractions of a predict block's motion (from its start to its predicted end) tried "
      "on the probe set at the block's end, e.g. 1,0.5,0.25; the one with the lowest probe "
      "loss is verified and kept or rolled back (1: the predicted end as is)");
  s.add_choice("predict.momentum_after_accept", "keep", {"keep", "zero"},
               "after a kept predict block: keep the optimizer's first moment (SGD momentum, Adam "
               "m) as the last real step left it, or zero it so that it rebuilds from gradients at "
               "the predicted parameters (Adam's second moment and step count are kept)");
  s.add_choice("predict.probe_every", "step", {"step", "end"},
               "forward passes during a predict block: every step (telemetry continues) or only "
               "the verification at the end (largest saving)");
  s.add_int("predict.probe_rows", 512,
            "rows of the fixed probe set that verifies a predict block (from the probe part when "
            "dataset.probe_fraction > 0, else from the validation rows)",
            1, 1 << 30);
  s.add_int("checkpoint.every", 0,
            "checkpoint every this many steps (0: at the end and on a signal)", 0);
  s.add_int("checkpoint.keep", 3, "checkpoints of the run kept on disk (newest first)", 1, 1000000);
  s.add_string("run.restart", "",
               "continue from a checkpoint: a file, or auto (the newest of this run's output); "
               "run.mode = compare takes auto only: the arms that finished are read back from "
               "their <name>_arm.h5 and the others train again");
}

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

void warn_damaged(const std::string& why) {
  std::cerr << "hpt: warning: " << why << "; falling back to the next older checkpoint\n";
}

}  // namespace

void check_train_inputs(const RunContext& ctx) {
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
  parse_positive_reals(ctx.config.get_string("predict.step_scales"), "predict.step_scales");
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

int run_train_mode(const RunContext& ctx) {
  const train::TrainSummary s = train_run(ctx);
  return s.non_finite ? kExitDiverged : 0;
}

namespace {

train::HybridSettings hybrid_settings(const Config& c) {
  train::HybridSettings h;
  h.warmup = c.get_int("hybrid.warmup");
  h.full_steps = int(c.get_int("hybrid.full_steps"));
  h.correct_steps = int(c.get_int("hybrid.correct_steps"));
  h.max_predict_blocks = int(c.get_int("hybrid.max_predict_blocks"));
  h.lr_halve_steps = int(c.get_int("hybrid.lr_halve_steps"));
  h.max_horizon = int(c.get_int("predict.max_horizon"));
  h.tol = c.get_real("predict.tol");
  h.confidence = c.get_real("predict.confidence");
  h.min_coverage = c.get_real("predict.min_coverage");
  h.min_scored = int(c.get_int("predict.min_scored"));
  h.probe_every_step = c.get_string("predict.probe_every") == "step";
  h.probe_rows = int(c.get_int("predict.probe_rows"));
  h.retry_after = int(c.get_int("predict.retry_after"));
  h.zero_momentum_after_accept = c.get_string("predict.momentum_after_accept") == "zero";
  h.step_scales = parse_positive_reals(c.get_string("predict.step_scales"), "predict.step_scales");
  h.monitor.sigma = c.get_real("monitor.sigma");
  h.monitor.grad_explode = c.get_real("monitor.grad_explode");
  h.monitor.grad_vanish = c.get_real("monitor.grad_vanish");
  h.monitor.escalate_after = int(c.get_int("monitor.escalate_after"));
  return h;
}

}  // namespace

train::TrainSummary train_run(const RunContext& ctx, const std::vector<char>* replay) {
  const Config& c = ctx.config;
  const bool hybrid = replay == nullptr && c.get_string("train.hybrid") == "on";
  Registry<Dataset> datasets("dataset");
  register_dataset_styles(datasets, io::read_dataset_file);
  Registry<Model> models("model");
  register_model_styles(models);
  Registry<Optimizer> optimizers("optimizer");
  register_optimizer_styles(optimizers);
  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);

  auto dataset = datasets.create(c.get_string("dataset.style"), c);
  auto model = models.create(c.get_string("model.style"), c);
  if (model->input_size() != dataset->features() || model->output_size() != dataset->outputs()) {
    // Classes come from the largest label: name the row that holds it, the usual culprit.
    const std::string classes_origin =
        dataset->largest_label_row() < 0
            ? std::string()
            : " (classes = largest label + 1; the largest label, " +
                  std::to_string(dataset->outputs() - 1) + ", is in row " +
                  std::to_string(dataset->largest_label_row()) + " of " + dataset->source() + ")";
    throw InputError("model.layers = '" + c.get_string("model.layers") + "' maps " +
                     std::to_string(model->input_size()) + " inputs to " +
                     std::to_string(model->output_size()) + " outputs, but dataset '" +
                     dataset->style() + "' has " + std::to_string(dataset->features()) +
                     " features and " + std::to_string(dataset->outputs()) + " outputs" +
                     classes_origin + "; set the first and last layer sizes to these");
  }
  model->initialize(std::uint64_t(c.get_int("run.seed")));
  auto optimizer = optimizers.create(c.get_string("optimizer.style"), c);
  optimizer->bind(model->parameters());
  auto encoder = encoders.create(c.get_string("encoder.style"), c);
  auto history = encoder->create_history(1);
  const std::int64_t steps = c.get_int("train.steps");
  const LrSchedule schedule = make_lr_schedule(c, c.get_real("optimizer.lr"), long(steps));

  encoder->prepare(1);
  train::TrainState state{*model,  *optimizer, *dataset,
                          history, *encoder,   train::dataset_identity(*dataset)};
  const bool original = hybrid && c.get_string("hybrid.controller") == "original";
  std::unique_ptr<RssmDynamics> dynamics;
  std::unique_ptr<train::TrainingForecaster> forecaster;
  std::unique_ptr<OriginalRssm> original_rssm;
  if (original) {
    original_rssm = std::make_unique<OriginalRssm>(original_rssm_options(c));
  } else if (c.get_bool("train.forecaster") || hybrid) {
    dynamics = std::make_unique<RssmDynamics>(c);
    train::TrainingForecastSettings fs;
    fs.horizons = parse_horizons(c);
    fs.every = int(c.get_int("forecast.every"));
    fs.scenarios = int(c.get_int("forecast.scenarios"));
    fs.seed = std::uint64_t(c.get_int("run.seed"));
    fs.calibration_rule = forecast::calibration_rule(c.get_string("forecast.calibration"));
    fs.calibration_rate = c.get_real("forecast.calibration_rate");
    fs.calibration_window = int(c.get_int("forecast.calibration_window"));
    forecaster = std::make_unique<train::TrainingForecaster>(*dynamics, *encoder, fs);
    state.forecaster = forecaster.get();
  }
  std::unique_ptr<train::StepPolicy> policy;
  if (original) {
    const train::HybridSettings h = hybrid_settings(c);
    train::OriginalSchedule os;
    os.warmup = h.warmup, os.full_steps = h.full_steps, os.correct_steps = h.correct_steps;
    os.max_predict_blocks = h.max_predict_blocks;
    os.max_predict = int(c.get_int("original.max_predict"));
    os.threshold = c.get_real("original.threshold");
    policy =
        std::make_unique<train::OriginalPolicy>(state, schedule, os, *original_rssm, h.monitor);
  } else if (hybrid) {
    Registry<UpdatePredictor> updates("update");
    register_update_styles(updates);
    policy = std::make_unique<train::HybridPolicy>(state, schedule, hybrid_settings(c),
                                                   updates.create(c.get_string("update.style"), c),
                                                   steps);
  } else if (replay) {
    policy = train::make_replay_policy(state, schedule, *replay);
  } else {
    policy = train::make_full_training_policy(state, schedule);
  }
  state.policy = policy.get();
  std::int64_t start = 0;
  std::string restart;
  const auto candidates = restart_candidates(ctx);
  for (const std::string& ck : candidates) {
    try {
      start = train::load_checkpoint(ck, state);
      restart = ck;
      break;
    } catch (const train::DamagedCheckpoint& e) {
      if (c.get_string("run.restart") != "auto" || ck == candidates.back()) throw;
      warn_damaged(e.what());
    }
  }
  if (!restart.empty())
    std::cout << "restarting from " << restart << " at step " << start << "\n";
  else if (c.get_string("run.restart") == "auto")
    std::cout << "run.restart = auto: no checkpoint of this run yet, starting at step 0\n";
  std::cout << "dataset   " << dataset->summary() << "\n"
            << "model     " << model->summary() << "\n"
            << "optimizer " << optimizer->summary() << ", " << schedule.summary() << "\n"
            << "steps     " << policy->name() << "\n";

  train::TrainerSettings ts;
  ts.steps = steps;
  ts.batch_size = int(c.get_int("train.batch_size"));
  ts.val_every = int(c.get_int("train.val_every"));
  ts.print_every = int(c.get_int("run.print_every"));
  ts.checkpoint_every = int(c.get_int("checkpoint.every"));
  ts.keep_checkpoints = int(c.get_int("checkpoint.keep"));
  ts.output_prefix = output_prefix(ctx);
  ts.deck = ctx.resolved_ini;
  train::TraceFile trace(ctx.output_path("_trace.h5"), ctx.resolved_ini,
                         restart.empty() ? -1 : start);
  train::Trainer trainer(state, schedule, ts);
  train::TrainSummary s = trainer.run(start, trace, restart);
  if (original_rssm) {  // the parity loop's own forecaster (it has no filter step)
    s.seconds_train = original_rssm->seconds_train;
    s.seconds_forecast = original_rssm->seconds_forecast;
  }

  const double done = double(s.last_step - s.first_step);
  io::TextTable table({"quantity", "value"});
  table.add_row({"steps", std::to_string(s.first_step) + " -> " + std::to_string(s.last_step)});
  table.add_row({"final minibatch loss", io::fmt(s.final_loss, 6)});
  table.add_row({"final validation loss", io::fmt(s.final_val_loss, 6)});
  table.add_row({"final validation accuracy", io::fmt(100 * s.final_val_accuracy, 5) + " %"});
  table.add_row({"best validation accuracy", io::fmt(100 * s.best_val_accuracy, 5) + " %"});
  table.add_row({"wall time", io::fmt(s.seconds, 4) + " s"});
  table.add_row({"steps/s", io::fmt(done / std::max(1e-9, s.seconds), 4)});
  const double per_step = 1e3 / std::max(1.0, done);
  table.add_row({"real step (forward, backward, update)",
                 io::fmt(s.seconds_steps * per_step, 4) + " ms/step"});
  table.add_row({"telemetry + encode", io::fmt(s.seconds_encode * per_step, 4) + " ms/step"});
  table.add_row({"checkpoints (with trace flushes)", io::fmt(s.seconds_checkpoints, 4) + " s"});
  table.add_row({"backward passes", std::to_string(s.backward_passes) + " of " +
                                        std::to_string(s.last_step - s.first_step) + " steps"});
  if (hybrid)
    table.add_row({"skip ratio (steps without a backward pass)",
                   io::fmt(1.0 - double(s.backward_passes) / std::max(1.0, done), 4)});
  for (const auto& [k, v] : s.policy_report) table.add_row({k, v});
  table.add_row({"last checkpoint", s.last_checkpoint.empty() ? "-" : s.last_checkpoint});
  table.add_row({"trace", trace.path()});
  if (forecaster) {
    const double per = 1e3 / std::max(1.0, done);
    table.add_row(
        {"forecaster: filter", io::fmt(forecaster->seconds_filter * per, 4) + " ms/step"});
    table.add_row(
        {"forecaster: online training", io::fmt(forecaster->seconds_train * per, 4) + " ms/step"});
    table.add_row({"forecaster: forecasts (rollouts)",
                   io::fmt(forecaster->seconds_forecast * per, 4) + " ms/step"});
  }
  std::cout << "\nsummary\n" << table.str();
  if (forecaster) {
    io::TextTable ft({"horizon", "forecasts scored", "mean |error| log L", "90% coverage"});
    for (const auto& h : forecaster->scores())
      ft.add_row({std::to_string(h.horizon), std::to_string(h.scored), io::fmt(h.mean_abs_error, 4),
                  io::fmt(h.coverage, 4)});
    std::cout << "\nforecaster (" << dynamics->members() << " members, H " << dynamics->hidden()
              << ", online BPTT over " << c.get_int("dynamics.bptt")
              << " steps; intervals calibrated online)\n"
              << ft.str();
  }
  return s;
}

}  // namespace hpt::app
