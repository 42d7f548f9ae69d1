#pragma once
// Shared by the encoder tests: random telemetry records, a plain host model of what each run has
// received (full per-series sequences, no rings), and a driver that pushes the same records into a
// device TelemetryHistory step by step. References are computed from the host model, whose "ring"
// is simply the newest `capacity` values of each sequence.
#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "kernels/reference/encode_reference.hpp"
#include "kernels/telemetry_history.hpp"

namespace hpt::test {

// The host model of a run (HostRun, apply_record) and the random records are the plain references
// of kernels/reference/encode_reference.hpp, shared with the bench.
using reference::apply_record;
using reference::as_stored;
using reference::HostRun;
using reference::random_record;

// Pushes records step by step: steps[t][r] is run r's record of step t (one kernel per step, as in
// training and replay). Updates `host` (one HostRun per run) alongside.
template <class Space, class Real>
void push_steps(const TelemetryHistory<Real, typename Space::memory_space>& history,
                const std::vector<std::vector<TelemetryRecord>>& steps,
                std::vector<HostRun>& host) {
  using Mem = typename Space::memory_space;
  const int runs = history.runs();
  View1<TelemetryRecord, Mem> records("records", runs);
  auto mirror = Kokkos::create_mirror_view(records);
  for (const auto& step : steps) {
    for (int r = 0; r < runs; ++r) {
      mirror(r) = step[r];
      apply_record<Real>(host[r], step[r]);
    }
    Kokkos::deep_copy(records, mirror);
    push_records(Space(), history, View1<const TelemetryRecord, Mem>(records));
  }
  Space().fence();
}

// Random steps for `runs` runs; run r gets lengths[r] active steps (inactive records afterwards).
inline std::vector<std::vector<TelemetryRecord>> random_steps(std::mt19937& rng,
                                                              const std::vector<int>& lengths) {
  const int longest = *std::max_element(lengths.begin(), lengths.end());
  std::vector<std::vector<TelemetryRecord>> steps(longest,
                                                  std::vector<TelemetryRecord>(lengths.size()));
  for (int t = 0; t < longest; ++t)
    for (std::size_t r = 0; r < lengths.size(); ++r) {
      steps[t][r] = random_record(rng, int(r), t);
      steps[t][r].active = t < lengths[r];
    }
  return steps;
}

}  // namespace hpt::test
