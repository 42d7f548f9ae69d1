#pragma once
// Deck sections of a training run ([train], [checkpoint], run.restart) and the forecaster trained
// along it: declared and read here, next to the trainer that uses them.
#include <string>

#include "core/config.hpp"
#include "train/trainer.hpp"
#include "train/training_forecaster.hpp"

namespace hpt::train {

void declare_training_options(OptionSchema& schema);
// The trainer's settings; checkpoints are written as <output_prefix>_ckpt_<step>.h5 and hold
// `resolved_deck`.
TrainerSettings read_trainer_settings(const Config& config, const std::string& output_prefix,
                                      const std::string& resolved_deck);
TrainingForecastSettings read_training_forecast_settings(const Config& config);

}  // namespace hpt::train
