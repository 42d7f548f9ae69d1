#include "app/parallel_inputs.hpp"

#include "core/error.hpp"

namespace hpt::app {

void check_parallel_inputs(const Config& config, const std::string& mode, int ranks) {
  if (ranks == 1 || mode == "forecast") return;  // forecast: divided by run, any number of runs
  const std::string on = " on " + std::to_string(ranks) + " processes";
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
