#pragma once
// The runs of a forecast origin divided over the processes of the run (docs/mpi.md): process p of
// N forecasts the marked runs of its contiguous block of run indices, [R p / N, R (p + 1) / N) (the
// ensemble's rollouts, the fits and rows), and every process then holds every run's forecasts,
// gathered in run order. The parts of the study that compare or pool runs (calibration, error
// records, combination, leaders, stop list) therefore see exactly what one process computes, on
// every process. With one process nothing is exchanged.
#include <cstddef>
#include <vector>

#include "core/communicator.hpp"
#include "forecast/curve_study.hpp"

namespace hpt::forecast {

// The runs [first, end) of one process.
struct RunBlock {
  int first = 0, end = 0;
};
RunBlock run_block(int runs, int rank, int ranks);

// The entries [lo, hi) of `marked` (increasing run indices) that lie in `block`.
struct MarkedRange {
  std::size_t lo = 0, hi = 0;
};
MarkedRange marked_range(const std::vector<int>& marked, RunBlock block);

// Entries [lo, hi) of `w` (per marked run: its K rows, K validation rows and final forecast) as
// numbers; every field is an integer below 2^53 or a double, so unpacking restores it bit for bit.
std::vector<double> pack_origin_work(const OriginWork& w, MarkedRange range, int K);
// Fills the entries of w.marked from `packed` (every entry, in order); w's vectors already sized.
void unpack_origin_work(const std::vector<double>& packed, int K, OriginWork& w);

// Each process has made the entries `mine` of `w`; afterwards every process holds all of them.
void share_origin_work(const Communicator& comm, MarkedRange mine, int K, OriginWork& w);

// The ensemble's forecast `f` holds the marked runs `mine` of this process (statistics at every
// horizon and the last horizon's paths); afterwards every process's holds every marked run's.
std::vector<double> pack_ensemble_forecast(const CurveForecast& f, const std::vector<int>& marked,
                                           MarkedRange range);
void unpack_ensemble_forecast(const std::vector<double>& packed, const std::vector<int>& marked,
                              CurveForecast& f);
void share_ensemble_forecast(const Communicator& comm, const std::vector<int>& marked,
                             MarkedRange mine, CurveForecast& f);

}  // namespace hpt::forecast
