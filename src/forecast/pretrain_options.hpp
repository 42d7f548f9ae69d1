#pragma once
// The [pretrain] options of run.mode = pretrain (the learned level forecaster fitted to a corpus of
// curves, forecast/level_model.hpp) and forecast.pretrained, the model file forecasts use.
#include <string>

#include "core/config.hpp"
#include "forecast/level_model.hpp"

namespace hpt::forecast {

void declare_pretrain_options(OptionSchema& schema);

// The sampling of the corpus (pretrain.horizons, pretrain.every). InputError naming the key when
// pretrain.horizons is not an increasing list of horizons in [5, 100000].
LevelSampling read_level_sampling(const Config& config);

// The model file forecast.pretrained names: `default` is the model shipped with hpt
// (HPT_MODELS_DIR/level-model.h5, HPT_MODELS_DIR from the environment or the build), `none` is
// no model (empty string), anything else a path.
std::string pretrained_model_path(const Config& config);
// The model file forecast.pretrained_sparse names, the same way (`default`:
// HPT_MODELS_DIR/level-model-sparse.h5).
std::string sparse_model_path(const Config& config);
// The model file forecast.final_model names, the same way (`default`:
// HPT_MODELS_DIR/final-level-model.h5).
std::string final_model_path(const Config& config);

}  // namespace hpt::forecast
