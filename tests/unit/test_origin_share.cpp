// The runs of a forecast origin divided over processes: every process's block of runs (contiguous,
// disjoint, covering all runs), the marked runs inside a block, and the packing that carries an
// origin's work and the ensemble's forecasts between processes, restoring every field bit for bit
// (NaN, -0.0 and large steps included).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "core/error.hpp"
#include "forecast/origin_share.hpp"

namespace {

using namespace hpt::forecast;

bool same_bits(double a, double b) {
  return std::memcmp(&a, &b, sizeof a) == 0;
}

// A work of `n` marked runs at K horizons whose every number differs from the defaults.
OriginWork sample_work(int n, int K) {
  OriginWork w;
  double x = 0.125;
  const auto next = [&x] { return x += 1.5; };
  for (int i = 0; i < n; ++i) {
    w.marked.push_back(3 * i + 1);
    for (int k = 0; k < K; ++k) {
      ForecastRow r;
      r.run = 3 * i + 1, r.origin = (1LL << 40) + i, r.k = k;
      r.mean = next(), r.q05 = -0.0, r.q50 = next(), r.q95 = next();
      r.raw_q05 = next(), r.raw_q95 = std::numeric_limits<double>::infinity(), r.target = next();
      r.inside = k % 2;
      r.loglin_t = next();
      for (int b = 0; b < kBaselines; ++b) {
        r.base[b] = next(), r.base_lo[b] = next(),
        r.base_hi[b] = b == 2 ? ForecastRow::kNaN : next();
        r.base_inside[b] = b % 3 - 1;
      }
      w.rows.push_back(r);
      ValidationRow v;
      v.run = r.run, v.origin = r.origin, v.k = k;
      v.f.val_step = 1000 + k, v.f.level = next(), v.f.mid = next(), v.f.lo = -0.0;
      v.f.hi = next(), v.f.target = ForecastRow::kNaN;
      w.validation.push_back(v);
    }
    w.finals.push_back({next(), next(), next()});
  }
  return w;
}

void expect_same(const ForecastRow& a, const ForecastRow& b) {
  EXPECT_EQ(a.run, b.run);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.inside, b.inside);
  for (const auto m :
       {&ForecastRow::mean, &ForecastRow::q05, &ForecastRow::q50, &ForecastRow::q95,
        &ForecastRow::raw_q05, &ForecastRow::raw_q95, &ForecastRow::target, &ForecastRow::loglin_t})
    EXPECT_TRUE(same_bits(a.*m, b.*m));
  for (int i = 0; i < kBaselines; ++i) {
    EXPECT_TRUE(same_bits(a.base[i], b.base[i]));
    EXPECT_TRUE(same_bits(a.base_lo[i], b.base_lo[i]));
    EXPECT_TRUE(same_bits(a.base_hi[i], b.base_hi[i]));
    EXPECT_EQ(a.base_inside[i], b.base_inside[i]);
  }
}

void expect_same(const ValidationRow& a, const ValidationRow& b) {
  EXPECT_EQ(a.run, b.run);
  EXPECT_EQ(a.origin, b.origin);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.f.val_step, b.f.val_step);
  for (const auto m :
       {&ValidationForecast::level, &ValidationForecast::mid, &ValidationForecast::lo,
        &ValidationForecast::hi, &ValidationForecast::target})
    EXPECT_TRUE(same_bits(a.f.*m, b.f.*m));
}

// A work with w's marked runs and every entry at its default.
OriginWork empty_like(const OriginWork& w, int K) {
  OriginWork e;
  e.marked = w.marked;
  e.rows.resize(w.marked.size() * std::size_t(K));
  e.validation.resize(e.rows.size());
  e.finals.resize(w.marked.size());
  return e;
}

TEST(OriginShare, BlocksAreContiguousDisjointAndCoverEveryRun) {
  for (int runs = 0; runs <= 9; ++runs)
    for (int ranks = 1; ranks <= 4; ++ranks) {
      int next = 0;
      for (int p = 0; p < ranks; ++p) {
        const RunBlock b = run_block(runs, p, ranks);
        EXPECT_EQ(b.first, next);
        EXPECT_GE(b.end, b.first);
        EXPECT_LE(b.end - b.first, runs / ranks + 1);  // as even as they can be
        next = b.end;
      }
      EXPECT_EQ(next, runs);
    }
  EXPECT_EQ(run_block(5, 0, 2).end, 2);
  EXPECT_EQ(run_block(1, 0, 2).end, 0);  // fewer runs than processes: the first forecasts none
}

TEST(OriginShare, MarkedRangeHoldsTheMarkedRunsOfABlock) {
  const std::vector<int> marked{1, 3, 4, 7};
  const MarkedRange in = marked_range(marked, {2, 5});
  EXPECT_EQ(in.lo, 1u);
  EXPECT_EQ(in.hi, 3u);
  const MarkedRange none = marked_range(marked, {5, 7});
  EXPECT_EQ(none.lo, none.hi);
  const MarkedRange last = marked_range(marked, {5, 9});
  EXPECT_EQ(last.lo, 3u);
  EXPECT_EQ(last.hi, 4u);
}

TEST(OriginShare, PackedBlocksUnpackToEveryFieldBitForBit) {
  const int K = 3;
  const OriginWork w = sample_work(3, K);
  // Two processes' blocks, gathered one after the other as the allgather does.
  std::vector<double> packed = pack_origin_work(w, {0, 1}, K);
  const std::vector<double> second = pack_origin_work(w, {1, 3}, K);
  EXPECT_EQ(second.size(), 2 * packed.size());
  packed.insert(packed.end(), second.begin(), second.end());
  OriginWork out = empty_like(w, K);
  unpack_origin_work(packed, K, out);
  for (std::size_t i = 0; i < w.rows.size(); ++i) {
    expect_same(w.rows[i], out.rows[i]);
    expect_same(w.validation[i], out.validation[i]);
  }
  for (std::size_t i = 0; i < w.finals.size(); ++i) {
    EXPECT_TRUE(same_bits(w.finals[i].mid, out.finals[i].mid));
    EXPECT_TRUE(same_bits(w.finals[i].lo, out.finals[i].lo));
    EXPECT_TRUE(same_bits(w.finals[i].hi, out.finals[i].hi));
  }
}

TEST(OriginShare, AGatherOfTheWrongLengthIsRefused) {
  const int K = 2;
  const OriginWork w = sample_work(2, K);
  OriginWork out = empty_like(w, K);
  EXPECT_THROW(unpack_origin_work(pack_origin_work(w, {0, 1}, K), K, out), hpt::InternalError);
}

// A forecast of `runs` runs at K horizons with `paths` paths, NaN where a run was not rolled out.
CurveForecast empty_forecast(int runs, int K, int paths) {
  CurveForecast f;
  f.runs = runs, f.horizons = K, f.paths = paths;
  f.mean.assign(std::size_t(runs * K), ForecastRow::kNaN);
  f.q05 = f.q50 = f.q95 = f.mean;
  f.paths_last.assign(std::size_t(runs * paths), ForecastRow::kNaN);
  return f;
}

TEST(OriginShare, EnsembleForecastsOfTwoBlocksUnpackToTheWholeForecast) {
  const int R = 6, K = 2, P = 3;
  const std::vector<int> marked{0, 2, 3, 5};
  CurveForecast whole = empty_forecast(R, K, P);
  double x = -0.0;
  for (const int r : marked) {
    for (std::vector<double>* v : {&whole.mean, &whole.q05, &whole.q50, &whole.q95})
      for (int k = 0; k < K; ++k) (*v)[std::size_t(r * K + k)] = x, x += 0.75;
    for (int p = 0; p < P; ++p) whole.paths_last[std::size_t(r * P + p)] = x, x -= 2.5;
  }
  // Process 0 rolled out runs 0 and 2 (marked entries [0, 2)), process 1 runs 3 and 5.
  std::vector<double> packed = pack_ensemble_forecast(whole, marked, {0, 2});
  const std::vector<double> second = pack_ensemble_forecast(whole, marked, {2, 4});
  packed.insert(packed.end(), second.begin(), second.end());
  CurveForecast out = empty_forecast(R, K, P);
  unpack_ensemble_forecast(packed, marked, out);
  for (const auto m : {&CurveForecast::mean, &CurveForecast::q05, &CurveForecast::q50,
                       &CurveForecast::q95, &CurveForecast::paths_last})
    for (std::size_t i = 0; i < (whole.*m).size(); ++i)
      EXPECT_TRUE(same_bits((whole.*m)[i], (out.*m)[i])) << i;
  EXPECT_THROW(unpack_ensemble_forecast(second, marked, out), hpt::InternalError);
}

}  // namespace
