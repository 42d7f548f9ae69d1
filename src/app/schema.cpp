#include "app/schema.hpp"

#include "app/mode_bench.hpp"
#include "app/mode_compare.hpp"
#include "app/mode_rollout.hpp"
#include "forecast/forecast_options.hpp"
#include "forecast/pretrain_options.hpp"
#include "app/watch_options.hpp"
#include "physics-style-modules/dataset/register.hpp"
#include "physics-style-modules/model/register.hpp"
#include "physics-style-modules/optimizer/register.hpp"
#include "train/hybrid_options.hpp"
#include "train/lr_schedule.hpp"
#include "train/training_options.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/encoder/register.hpp"
#include "physics-style-modules/update/register.hpp"

namespace hpt::app {

namespace {

void declare_run_options(OptionSchema& s) {
  s.add_choice(
      "run.mode", "train",
      {"train", "rollout", "bench", "forecast", "compare", "pretrain", "watch"},
      "what to do: train (full or hybrid training), rollout (ensemble forecast paths), "
      "bench (kernel timings, docs/perf), forecast (loss curves of a sweep of runs), compare "
      "(a hybrid deck against full, budget and freeze training; also hpt --compare), pretrain "
      "(fit the learned level forecaster to a corpus of curves), watch (follow a live sweep and "
      "stop the runs that cannot win)");
  s.add_int("run.seed", 1, "seed of every random draw of the run", 0);
  s.add_int("run.threads", 0,
            "host threads for the OpenMP backend (0: OMP_NUM_THREADS or the Kokkos default)", 0,
            4096);
  s.add_int("run.print_every", 100, "progress line every this many steps or rows", 1);
  s.add_string("output.dir", "out", "folder for every output file of the run (created if missing)");
  s.add_string("output.name", "", "base name of the output files (default: the deck's file name)");
}

}  // namespace

OptionSchema build_schema() {
  OptionSchema s;
  declare_run_options(s);
  declare_encoder_options(s);
  declare_dynamics_options(s);
  declare_rollout_options(s);
  declare_bench_options(s);
  forecast::declare_forecast_options(s);
  forecast::declare_pretrain_options(s);
  declare_watch_options(s);
  train::declare_training_options(s);
  train::declare_hybrid_options(s);
  declare_update_options(s);
  declare_compare_options(s);
  declare_dataset_options(s);
  declare_model_options(s);
  declare_optimizer_options(s);
  declare_schedule_options(s);
  return s;
}

}  // namespace hpt::app
