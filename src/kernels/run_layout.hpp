#pragma once
// How the rich encoder maps runs to threads (encode_rich.hpp; the default by backend and number of
// runs: resolve_layout in telemetry_history.hpp).

namespace hpt {

// How an encoder maps runs to threads. TeamPerRun: a team reads one run's history and reduces it
// together (low latency for a few runs, e.g. R = 1 in training). ThreadPerRun: each thread walks
// one run's history alone (throughput for thousands of runs: no barriers, no reductions, every
// thread busy). SeriesPerThread: each thread walks one series of one run (four times the threads of
// ThreadPerRun, fewer registers each), then a team per 32 runs writes the features. Auto: by
// backend and number of runs (resolve_layout, telemetry_history.hpp).
enum class RunLayout { Auto, TeamPerRun, ThreadPerRun, SeriesPerThread };

struct EncodeLaunch {
  RunLayout layout = RunLayout::Auto;
  int team_size = 0;  // TeamPerRun: 0 picks the default of run_team_policy
};

}  // namespace hpt
