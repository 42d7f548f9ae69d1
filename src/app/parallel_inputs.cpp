#include "app/parallel_inputs.hpp"

#include "core/error.hpp"

namespace hpt::app {

namespace {

// The ensemble learns online from every run's transitions, so its state cannot be divided by run.
void check_parallel_forecast(const Config& config, const std::string& on) {
  if (config.get_string("forecast.ensemble") == "off") return;
  throw InputError("forecast.ensemble = " + config.get_string("forecast.ensemble") + on +
                   ": the shared ensemble learns online from every run and is not divided over "
                   "processes; expected forecast.ensemble = off (the other forecasters and the "
                   "stop list, divided by run), or run it as one process");
}

}  // namespace

void check_parallel_inputs(const Config& config, const std::string& mode, int ranks) {
  if (ranks == 1) return;
  const std::string on = " on " + std::to_string(ranks) + " processes";
  if (mode == "forecast") return check_parallel_forecast(config, on);
  if (mode != "train" && mode != "compare")
    throw InputError("run.mode = '" + mode + "'" + on +
                     ": only run.mode = train, compare and forecast run on several processes; run "
                     "it as one process");
  const auto batch = config.get_int("train.batch_size");
  if (batch % ranks != 0)
    throw InputError("train.batch_size = " + std::to_string(batch) + on +
                     ": the global minibatch must split into equal shards; expected a multiple "
                     "of " +
                     std::to_string(ranks));
}

}  // namespace hpt::app
