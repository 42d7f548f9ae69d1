#include "forecast/origin_share.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace hpt::forecast {

namespace {

// Numbers per marked run: K forecast rows, K validation rows, one final forecast.
constexpr std::size_t kRowNumbers = 12 + 4 * kBaselines;
constexpr std::size_t kValidationNumbers = 11;
constexpr std::size_t kFinalNumbers = 3;

std::size_t numbers_per_run(int K) {
  return std::size_t(K) * (kRowNumbers + kValidationNumbers) + kFinalNumbers;
}

void put(std::vector<double>& out, const ForecastRow& r) {
  out.insert(out.end(), {double(r.run), double(r.origin), double(r.k), r.mean, r.q05, r.q50, r.q95,
                         r.raw_q05, r.raw_q95, r.target});
  out.insert(out.end(), r.base, r.base + kBaselines);
  out.insert(out.end(), r.base_lo, r.base_lo + kBaselines);
  out.insert(out.end(), r.base_hi, r.base_hi + kBaselines);
  for (int b = 0; b < kBaselines; ++b) out.push_back(double(r.base_inside[b]));
  out.push_back(double(r.inside));
  out.push_back(r.loglin_t);
}

void put(std::vector<double>& out, const ValidationRow& v) {
  out.insert(out.end(), {double(v.run), double(v.origin), double(v.k), double(v.f.val_step),
                         v.f.level, v.f.mid, v.f.lo, v.f.hi, v.f.target, v.f.raw_lo, v.f.raw_hi});
}

void put(std::vector<double>& out, const LevelForecast& f) {
  out.insert(out.end(), {f.mid, f.lo, f.hi});
}

// Reads the numbers `put` wrote, advancing `at`.
void take(const double*& at, ForecastRow& r) {
  r.run = int(at[0]), r.origin = (long long)at[1], r.k = int(at[2]);
  r.mean = at[3], r.q05 = at[4], r.q50 = at[5], r.q95 = at[6];
  r.raw_q05 = at[7], r.raw_q95 = at[8], r.target = at[9];
  at += 10;
  std::copy(at, at + kBaselines, r.base), at += kBaselines;
  std::copy(at, at + kBaselines, r.base_lo), at += kBaselines;
  std::copy(at, at + kBaselines, r.base_hi), at += kBaselines;
  for (int b = 0; b < kBaselines; ++b) r.base_inside[b] = int(*at++);
  r.inside = int(*at++);
  r.loglin_t = *at++;
}

void take(const double*& at, ValidationRow& v) {
  v.run = int(at[0]), v.origin = (long long)at[1], v.k = int(at[2]);
  v.f.val_step = (long long)at[3];
  v.f.level = at[4], v.f.mid = at[5], v.f.lo = at[6], v.f.hi = at[7], v.f.target = at[8];
  v.f.raw_lo = at[9], v.f.raw_hi = at[10];
  at += kValidationNumbers;
}

void take(const double*& at, LevelForecast& f) {
  f.mid = at[0], f.lo = at[1], f.hi = at[2];
  at += kFinalNumbers;
}

}  // namespace

RunBlock run_block(int runs, int rank, int ranks) {
  const auto bound = [&](int p) { return int((long long)runs * p / ranks); };
  return {bound(rank), bound(rank + 1)};
}

MarkedRange marked_range(const std::vector<int>& marked, RunBlock block) {
  const auto lo = std::lower_bound(marked.begin(), marked.end(), block.first);
  const auto hi = std::lower_bound(lo, marked.end(), block.end);
  return {std::size_t(lo - marked.begin()), std::size_t(hi - marked.begin())};
}

std::vector<double> pack_origin_work(const OriginWork& w, MarkedRange range, int K) {
  std::vector<double> out;
  out.reserve((range.hi - range.lo) * numbers_per_run(K));
  for (std::size_t i = range.lo; i < range.hi; ++i) {
    for (int k = 0; k < K; ++k) put(out, w.rows[i * std::size_t(K) + std::size_t(k)]);
    for (int k = 0; k < K; ++k) put(out, w.validation[i * std::size_t(K) + std::size_t(k)]);
    put(out, w.finals[i]);
  }
  return out;
}

void unpack_origin_work(const std::vector<double>& packed, int K, OriginWork& w) {
  HPT_REQUIRE(packed.size() == w.marked.size() * numbers_per_run(K),
              "the gathered forecasts of an origin have the wrong length");
  const double* at = packed.data();
  for (std::size_t i = 0; i < w.marked.size(); ++i) {
    for (int k = 0; k < K; ++k) take(at, w.rows[i * std::size_t(K) + std::size_t(k)]);
    for (int k = 0; k < K; ++k) take(at, w.validation[i * std::size_t(K) + std::size_t(k)]);
    take(at, w.finals[i]);
  }
}

void share_origin_work(const Communicator& comm, MarkedRange mine, int K, OriginWork& w) {
  if (comm.size() == 1) return;
  unpack_origin_work(comm.allgather(pack_origin_work(w, mine, K), Traffic::Evaluation), K, w);
}

namespace {

// Numbers per marked run of an ensemble forecast: mean, q05, q50, q95 per horizon, then the paths.
std::size_t ensemble_numbers(const CurveForecast& f) {
  return std::size_t(4 * f.horizons + f.paths);
}

}  // namespace

std::vector<double> pack_ensemble_forecast(const CurveForecast& f, const std::vector<int>& marked,
                                           MarkedRange range) {
  std::vector<double> out;
  out.reserve((range.hi - range.lo) * ensemble_numbers(f));
  for (std::size_t i = range.lo; i < range.hi; ++i) {
    const std::size_t at = std::size_t(marked[i]) * std::size_t(f.horizons);
    for (const std::vector<double>* v : {&f.mean, &f.q05, &f.q50, &f.q95})
      out.insert(out.end(), v->begin() + long(at), v->begin() + long(at) + f.horizons);
    const auto paths = f.paths_last.begin() + long(std::size_t(marked[i]) * std::size_t(f.paths));
    out.insert(out.end(), paths, paths + f.paths);
  }
  return out;
}

void unpack_ensemble_forecast(const std::vector<double>& packed, const std::vector<int>& marked,
                              CurveForecast& f) {
  HPT_REQUIRE(packed.size() == marked.size() * ensemble_numbers(f),
              "the gathered ensemble forecasts of an origin have the wrong length");
  auto from = packed.begin();
  for (const int r : marked) {
    const std::size_t at = std::size_t(r) * std::size_t(f.horizons);
    for (std::vector<double>* v : {&f.mean, &f.q05, &f.q50, &f.q95}) {
      std::copy(from, from + f.horizons, v->begin() + long(at));
      from += f.horizons;
    }
    std::copy(from, from + f.paths,
              f.paths_last.begin() + long(std::size_t(r) * std::size_t(f.paths)));
    from += f.paths;
  }
}

void share_ensemble_forecast(const Communicator& comm, const std::vector<int>& marked,
                             MarkedRange mine, CurveForecast& f) {
  if (comm.size() == 1) return;
  unpack_ensemble_forecast(
      comm.allgather(pack_ensemble_forecast(f, marked, mine), Traffic::Evaluation), marked, f);
}

}  // namespace hpt::forecast
