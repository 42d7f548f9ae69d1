#pragma once
// Level model files (kind "level_model"): the pretrained learned level forecaster written by
// run.mode = pretrain and read by forecast mode (forecast.pretrained).
#include <string>

#include "forecast/level_model.hpp"

namespace hpt::io {

// Writes the model under /level_model, atomically (a crash leaves no file or the previous one).
void save_level_model(const forecast::LevelModel& model, const std::string& path,
                      const std::string& deck);

// Reads and checks a model file: an hpt file of kind level_model, the model version this build
// reads, the same feature list, three weight vectors of one weight per feature, every weight
// finite, the checksum over the weights, and a model of the `expected` target. Anything else is an
// InputError naming `key`, the file and what is wrong.
forecast::LevelModel load_level_model(
    const std::string& path, const std::string& key,
    forecast::LevelModel::Target expected = forecast::LevelModel::Target::kHorizons);

}  // namespace hpt::io
