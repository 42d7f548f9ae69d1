#include "train/training_options.hpp"

#include "forecast/adaptive_conformal.hpp"
#include "forecast/forecast_options.hpp"

namespace hpt::train {

void declare_training_options(OptionSchema& s) {
  s.add_int("train.steps", 1000, "training steps (optimizer updates) of the run", 1);
  s.add_int("train.batch_size", 32, "minibatch rows", 1, 1 << 24);
  s.add_int("train.val_every", 100, "validation on the whole held-out part every this many steps",
            1);
  s.add_bool("train.forecaster", false,
             "train the RSSM forecaster online along the run ([dynamics]) and score its calibrated "
             "forecasts at forecast.horizons every forecast.every steps (trace /forecasts)");
  s.add_choice("train.forecast_style", "rssm", {"rssm", "learned"},
               "the forecaster inside training: rssm (the RSSM ensemble, trained online every real "
               "step) or learned (the pretrained level forecaster of forecast.pretrained, which "
               "reads the losses and the planned learning rates and costs microseconds a step)");
  s.add_choice("train.hybrid", "off", {"off", "on"},
               "on: the hybrid loop skips backward passes with verified predicted updates "
               "(docs/method.md; implies train.forecaster = on); off: full training, the baseline");
  s.add_int("checkpoint.every", 0,
            "checkpoint every this many steps (0: at the end and on a signal)", 0);
  s.add_int("checkpoint.keep", 3, "checkpoints of the run kept on disk (newest first)", 1, 1000000);
  s.add_string("run.restart", "",
               "continue from a checkpoint: a file, or auto (the newest of this run's output); "
               "run.mode = compare takes auto only: the arms that finished are read back from "
               "their <name>_arm.h5 and the others train again");
}

TrainerSettings read_trainer_settings(const Config& c, const std::string& output_prefix,
                                      const std::string& resolved_deck) {
  TrainerSettings ts;
  ts.steps = c.get_int("train.steps");
  ts.batch_size = int(c.get_int("train.batch_size"));
  ts.val_every = int(c.get_int("train.val_every"));
  ts.print_every = int(c.get_int("run.print_every"));
  ts.checkpoint_every = int(c.get_int("checkpoint.every"));
  ts.keep_checkpoints = int(c.get_int("checkpoint.keep"));
  ts.output_prefix = output_prefix;
  ts.deck = resolved_deck;
  return ts;
}

TrainingForecastSettings read_training_forecast_settings(const Config& c) {
  TrainingForecastSettings fs;
  fs.horizons = forecast::parse_horizons(c);
  fs.every = int(c.get_int("forecast.every"));
  fs.scenarios = int(c.get_int("forecast.scenarios"));
  fs.seed = std::uint64_t(c.get_int("run.seed"));
  fs.calibration_rule = forecast::calibration_rule(c.get_string("forecast.calibration"));
  fs.calibration_rate = c.get_real("forecast.calibration_rate");
  fs.calibration_window = int(c.get_int("forecast.calibration_window"));
  return fs;
}

}  // namespace hpt::train
