#include "app/mode_train.hpp"

#include "app/training_run.hpp"
#include "core/error.hpp"

namespace hpt::app {

void check_train_inputs(const RunContext& ctx) {
  check_training_inputs(ctx);
}

int run_train_mode(const RunContext& ctx) {
  const train::TrainSummary s = train_run(ctx);
  return s.non_finite ? kExitDiverged : 0;
}

}  // namespace hpt::app
