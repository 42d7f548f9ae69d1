#pragma once
// Dynamics model files: the parameters of a Dynamics style written by hpt (kind "model"), read
// back for rollouts and forecasts.
#include <string>

#include "core/config.hpp"
#include "physics-style-modules/dynamics/dynamics.hpp"

namespace hpt::io {

// Writes every parameter tensor under /dynamics plus the sizes as attributes, atomically.
void save_model_file(const Dynamics& dynamics, const std::string& path, const std::string& deck);

// Checks, without touching the device, that `path` is an hpt model file whose sizes match the
// deck's [dynamics] options; InputError naming `key`, the file and the mismatch otherwise.
void check_model_file(const std::string& path, const std::string& key, const Config& config);

// Loads the parameters into `dynamics` (shapes checked tensor by tensor).
void load_model_file(Dynamics& dynamics, const std::string& path);

}  // namespace hpt::io
