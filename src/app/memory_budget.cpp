#include "app/memory_budget.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <type_traits>

#include "app/bench_sizes.hpp"
#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "core/types.hpp"
#include "forecast/curve_study.hpp"
#include "forecast/forecast_options.hpp"
#include "io/curve_files.hpp"
#include "io/dataset_files.hpp"
#include "physics-style-modules/dataset/register.hpp"
#include "physics-style-modules/dynamics/register.hpp"
#include "physics-style-modules/encoder/register.hpp"
#include "physics-style-modules/model/register.hpp"
#include "physics-style-modules/update/register.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif

namespace hpt::app {

namespace {

constexpr double kReal = sizeof(real);

std::string gib(double bytes) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.3g GiB (%.0f bytes)", bytes / (1024.0 * 1024 * 1024), bytes);
  return buf;
}

// Loss paths, final latents and hidden norms of a rollout (RolloutOutputs).
double rollout_bytes(double N, double E, double H, double Y) {
  return N * E * ((Y + 1) + H + Y) * kReal;
}

// The data set and the model as their styles report them.
MemoryNeed data_and_model_need(const Config& c) {
  Registry<Dataset> datasets("dataset");
  register_dataset_styles(datasets, {}, [](const std::string& path) {
    const io::DeclaredShape s = io::declared_x_shape(path);
    return std::pair<long, long>(long(s.rows), long(s.columns));
  });
  Registry<Model> models("model");
  register_model_styles(models);
  MemoryNeed need = models.memory_need(c.get_string("model.style"), c);
  need += datasets.memory_need(c.get_string("dataset.style"), c);
  return need;
}

MemoryNeed train_need(const Config& c) {
  MemoryNeed need = data_and_model_need(c);
  need.bytes += encoder_history_bytes(c, 1);
  const bool hybrid = c.get_string("train.hybrid") == "on";
  if (c.get_bool("train.forecaster") || hybrid) {
    MemoryNeed forecaster = rssm_training_memory(c, 1);
    forecaster.keys = (c.get_bool("train.forecaster") ? "train.forecaster on: "
                                                      : "forecaster of the hybrid loop: ") +
                      forecaster.keys;
    need += forecaster;
  }
  if (hybrid) {
    // The snapshot (parameters and optimizer state) and the update predictor's kept buffers.
    need.bytes += (4 + update_parameter_copies(c)) * need.parameters * kReal;
    need.keys += ", train.hybrid = on with update.style = " + c.get_string("update.style");
  }
  return need;
}

MemoryNeed forecast_need(const Config& c) {
  // The curves were read and checked before (check_forecast_inputs); read again for their sizes.
  const forecast::CurveSet curves = io::read_curves_step_by_step(
      c.get_string("forecast.input"), c.get_bool("forecast.skip_bad_runs"));
  double T = 0;
  for (const auto& run : curves.runs) T += double(run.steps.size());
  const double R = double(curves.runs.size());
  const double E = double(c.get_int("dynamics.members")), H = double(c.get_int("dynamics.hidden"));
  const double N = double(c.get_int("forecast.scenarios"));
  forecast::CurveStudySettings settings = forecast::read_curve_study_settings(c);
  std::vector<std::string> notes;
  forecast::fit_horizons_to_runs(settings, curves, notes);  // the horizons the study will use
  const double max_h = double(settings.horizons.back());
  MemoryNeed need;
  const MemoryNeed forecaster = rssm_training_memory(c, R);
  need.bytes = forecaster.bytes + encoder_history_bytes(c, R) + R * E * H * 2 * kReal +
               rollout_bytes(R * N, E, H, max_h + 5) + T * 8 * 6;
  need.keys = "forecast.input = '" + c.get_string("forecast.input") + "' (" +
              std::to_string(curves.runs.size()) +
              " runs), forecast.scenarios = " + std::to_string(c.get_int("forecast.scenarios")) +
              ", forecast.horizons = " + c.get_string("forecast.horizons") + ", " + forecaster.keys;
  return need;
}

MemoryNeed rollout_need(const Config& c) {
  const double E = double(c.get_int("dynamics.members")), H = double(c.get_int("dynamics.hidden"));
  const double S = double(c.get_int("dynamics.stochastic"));
  const double N = double(c.get_int("rollout.scenarios")), Y = double(c.get_int("rollout.horizon"));
  MemoryNeed need;
  need.bytes = rssm_parameter_bytes(E, H, kFeatures, S) + rollout_bytes(N, E, H, Y) +
               encoder_history_bytes(c, 1);
  need.keys = "rollout.scenarios = " + std::to_string(c.get_int("rollout.scenarios")) +
              ", dynamics.members = " + std::to_string(c.get_int("dynamics.members")) +
              ", rollout.horizon = " + std::to_string(c.get_int("rollout.horizon")) +
              ", dynamics.hidden = " + std::to_string(c.get_int("dynamics.hidden"));
  return need;
}

MemoryNeed bench_need(const Config& c) {
  MemoryNeed need;
  double largest_rollout = 0;
  for (const RolloutSize& s : parse_rollout_sizes(c.get_string("bench.sizes"), "bench.sizes"))
    largest_rollout =
        std::max(largest_rollout, rssm_parameter_bytes(s.members, s.hidden, s.input, s.stochastic) +
                                      rollout_bytes(s.scenarios, s.members, s.hidden, s.horizon));
  double largest_encode = 0;
  const double history = double(c.get_int("bench.encoder_history"));
  for (long r : parse_positive_list(c.get_string("bench.encoder_runs"), "bench.encoder_runs",
                                    "1,1024,65536"))
    largest_encode = std::max(largest_encode, double(r) * (17 * history + 2 * kFeatures) * kReal);
  const double copy = 2.0 * double(c.get_int("bench.copy_mb")) * 1024 * 1024;
  need.bytes = largest_rollout + largest_encode + copy;
  need.keys = "bench.sizes = " + c.get_string("bench.sizes") +
              ", bench.encoder_runs = " + c.get_string("bench.encoder_runs") +
              ", bench.encoder_history = " + std::to_string(c.get_int("bench.encoder_history")) +
              ", bench.copy_mb = " + std::to_string(c.get_int("bench.copy_mb"));
  return need;
}

// The cgroup (v2, then v1) memory limit of this process minus what it already uses; 0 if none.
double cgroup_headroom() {
  auto read_number = [](const char* path) -> double {
    std::ifstream f(path);
    std::string v;
    if (!(f >> v) || v == "max") return 0;
    try {
      return std::stod(v);
    } catch (...) {
      return 0;
    }
  };
  double limit = read_number("/sys/fs/cgroup/memory.max");
  double used = read_number("/sys/fs/cgroup/memory.current");
  if (limit <= 0) {
    limit = read_number("/sys/fs/cgroup/memory/memory.limit_in_bytes");
    used = read_number("/sys/fs/cgroup/memory/memory.usage_in_bytes");
  }
  if (limit <= 0 || limit > 1e18) return 0;  // v1 reports "no limit" as a huge number
  return std::max(0.0, limit - used);
}

double host_available_bytes() {
  std::ifstream f("/proc/meminfo");
  std::string line;
  double available = 0;
  while (std::getline(f, line)) {
    std::istringstream in(line);
    std::string key;
    double kib = 0;
    if (in >> key >> kib && key == "MemAvailable:") available = kib * 1024;
  }
  const double cgroup = cgroup_headroom();
  if (cgroup > 0 && (available <= 0 || cgroup < available)) available = cgroup;
  return available;
}

}  // namespace

MemoryNeed estimate_memory_need(const Config& config, const std::string& mode) {
  if (mode == "train" || mode == "compare") return train_need(config);
  if (mode == "rollout") return rollout_need(config);
  if (mode == "bench") return bench_need(config);
  if (mode == "forecast") return forecast_need(config);
  return {};
}

double available_memory_bytes() {
#if defined(KOKKOS_ENABLE_CUDA)
  if (std::is_same<ExecSpace, Kokkos::Cuda>::value) {
    std::size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) return 0;
    return double(free_bytes);
  }
#endif
  return host_available_bytes();
}

void check_memory_need(const MemoryNeed& need, double available, const std::string& where) {
  if (available <= 0 || need.bytes <= 0.9 * available) return;
  throw InputError("the run needs about " + gib(need.bytes) + " of memory (" + need.keys +
                   ") but the " + where + " has " + gib(available) +
                   " available; expected sizes that fit (reduce them or use a larger machine)");
}

}  // namespace hpt::app
