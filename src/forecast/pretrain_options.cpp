#include "forecast/pretrain_options.hpp"

#include <cstdlib>
#include <sstream>

#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "forecast/baselines.hpp"

#ifndef HPT_MODELS_DIR
#define HPT_MODELS_DIR "inputs/models"
#endif

namespace hpt::forecast {

namespace {

const char* const kPretrainHorizonsExample = "10,25,50,100,200,400";

}  // namespace

void declare_pretrain_options(OptionSchema& s) {
  s.add_string("pretrain.input", "",
               "curve files of the corpus the level forecaster is fitted to, comma-separated (the "
               "formats of forecast.input); their runs should be others than those it will be "
               "judged on");
  s.add_string("pretrain.split", "",
               "only the runs whose HDF5 attribute `split` is one of these comma-separated values "
               "(empty: every run)");
  s.add_bool("pretrain.skip_bad_runs", false,
             "skip a malformed run with a warning instead of refusing the file");
  s.add_bool("pretrain.validation_runs", false,
             "also fit to each run's validation losses (val_step, val_loss; at least 10) as a "
             "curve of its own: smooth, sparse curves that may turn up");
  s.add_int("pretrain.logged_every_runs", 0,
            "also fit to each run recorded at every step as a copy logged every this many steps "
            "(its losses at the multiples and its last step, joined by straight lines; 0: none)",
            0, 100);
  s.add_bool("pretrain.recorded_runs", true,
             "fit to the runs as the files record them (off: only to the curves "
             "pretrain.validation_runs and pretrain.logged_every_runs add, e.g. for a "
             "forecast.pretrained_sparse model)");
  s.add_string("pretrain.horizons", kPretrainHorizonsExample,
               "horizons in steps the model is fitted at (>= 5, increasing)");
  s.add_choice("pretrain.target", "horizons", {"horizons", "end"},
               "what the model forecasts: horizons (the level at each of pretrain.horizons ahead; "
               "a forecast.pretrained model) or end (the run's final level from any origin; a "
               "forecast.final_model model for the stop list)");
  s.add_real("pretrain.end_from", 0.05,
             "pretrain.target = end: origins from this fraction of each run's entries", 0.0, 1.0);
  s.add_real("pretrain.end_to", 0.95,
             "pretrain.target = end: origins up to this fraction of each run's entries", 0.0, 1.0);
  s.add_int("pretrain.every", 10, "an origin every this many entries of each run", 1, 1000000);
  s.add_real("pretrain.ridge", 10.0, "ridge penalty of the quantile regressions", 0.0, 1e12);
  s.add_int("pretrain.iterations", 3000,
            "most reweighted least-squares rounds of each quantile regression (each stops when its "
            "weights move by less than 1e-10)",
            1, 100000);
  s.add_int("pretrain.synthetic_runs", 0,
            "synthetic curves drawn from the prior of docs/method.md#synthetic-prior added to the "
            "corpus (0: none)",
            0, 1000000);
  s.add_int("pretrain.synthetic_seed", 1, "seed of the synthetic curves", 0, 1LL << 40);
  s.add_string("forecast.pretrained", "default",
               "learned level forecaster: default (the model shipped with hpt), none, or a model "
               "file written by run.mode = pretrain");
  s.add_string("forecast.pretrained_sparse", "none",
               "learned level forecaster of the runs logged every few steps (read step by step): "
               "none (forecast.pretrained's), default (the model shipped for training losses "
               "logged every few steps; not for files of validation curves), or a model file "
               "written by run.mode = pretrain");
  s.add_string("forecast.final_model", "none",
               "the stop list's final-level forecaster: none (forecast.pretrained extrapolated to "
               "the end of the run), default (the final-level model shipped with hpt), or a model "
               "file written by run.mode = pretrain with pretrain.target = end");
}

LevelSampling read_level_sampling(const Config& c) {
  LevelSampling s;
  const std::string& text = c.get_string("pretrain.horizons");
  s.horizons.clear();
  for (long v : parse_positive_list(text, "pretrain.horizons", kPretrainHorizonsExample)) {
    if (v < kTargetBefore + 1 || v > 100000 || (!s.horizons.empty() && v <= s.horizons.back()))
      throw InputError("pretrain.horizons = '" + text + "': horizon " + std::to_string(v) +
                       " is out of order or range; expected increasing steps in [5, 100000], "
                       "e.g. '" +
                       kPretrainHorizonsExample + "'");
    s.horizons.push_back(int(v));
  }
  s.every = int(c.get_int("pretrain.every"));
  s.to_end = c.get_string("pretrain.target") == "end";
  s.end_from = c.get_real("pretrain.end_from");
  s.end_to = c.get_real("pretrain.end_to");
  if (s.to_end && s.end_from >= s.end_to) {
    std::ostringstream m;
    m << "pretrain.end_from = " << s.end_from << " and pretrain.end_to = " << s.end_to
      << ": expected end_from < end_to (the span of each run's origins)";
    throw InputError(m.str());
  }
  return s;
}

namespace {

std::string model_path(const Config& c, const std::string& key, const std::string& file) {
  const std::string& value = c.get_string(key);
  if (value == "none") return "";
  if (value != "default") return value;
  const char* dir = std::getenv("HPT_MODELS_DIR");
  return std::string(dir && *dir ? dir : HPT_MODELS_DIR) + "/" + file;
}

}  // namespace

std::string pretrained_model_path(const Config& c) {
  return model_path(c, "forecast.pretrained", "level-model.h5");
}

std::string sparse_model_path(const Config& c) {
  return model_path(c, "forecast.pretrained_sparse", "level-model-sparse.h5");
}

std::string final_model_path(const Config& c) {
  return model_path(c, "forecast.final_model", "final-level-model.h5");
}

}  // namespace hpt::forecast
