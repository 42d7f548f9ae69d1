#include "forecast/schedule_law.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "forecast/baselines.hpp"

namespace hpt::forecast {

namespace {

constexpr int kBlock = kPowerBin;  // entries per fitted point, as `power`
constexpr int kAlphaGrid = 16;     // alpha on a log grid over [0.02, 3], then refined
constexpr int kRefine = 20;        // golden-section steps of the refinement
// The forecast stays within [history minimum / kFloor, history maximum * kCeiling] in loss.
constexpr double kFloor = 4.0, kCeiling = 1.5;

struct Point {
  double x, y, L;  // block means of S1^-alpha and S2, mean loss
  double log_L;    // log L, once
  // log of the block's S1 where it varies by over kExactRatio, else of its mean
  std::vector<double> log_forward;
};
// Within a block whose S1 varies by more than this factor (the first blocks), the mean of S1^-alpha
// is taken over its entries: at its mean S1 the law's block mean would be biased.
constexpr double kExactRatio = 1.1;

// The normal equations of the weighted least squares of L = L0 + A x - C y over `pts` (weights
// 1/L^2: relative errors), shared by every subset of free coefficients.
struct Normal {
  double M[3][3] = {}, b[3] = {};
};
Normal normal_equations(const std::vector<Point>& pts) {
  Normal n;
  for (const Point& p : pts) {
    const double f[3] = {1.0, p.x, -p.y}, w = 1.0 / (p.L * p.L);
    for (int i = 0; i < 3; ++i) {
      n.b[i] += w * f[i] * p.L;
      for (int j = 0; j < 3; ++j) n.M[i][j] += w * f[i] * f[j];
    }
  }
  return n;
}

// The fit with the coefficients in `free` (the others 0). False when singular or a coefficient is
// negative.
bool solve_subset(Normal n, const std::array<bool, 3>& free, std::array<double, 3>& coef) {
  auto& M = n.M;
  auto& b = n.b;
  for (int i = 0; i < 3; ++i)
    if (!free[std::size_t(i)]) {
      for (int j = 0; j < 3; ++j) M[i][j] = M[j][i] = 0;
      M[i][i] = 1, b[i] = 0;
    }
  // Gaussian elimination with partial pivoting on the 3x3 system.
  int idx[3] = {0, 1, 2};
  for (int c = 0; c < 3; ++c) {
    int p = c;
    for (int r = c + 1; r < 3; ++r)
      if (std::fabs(M[idx[r]][c]) > std::fabs(M[idx[p]][c])) p = r;
    std::swap(idx[c], idx[p]);
    const double d = M[idx[c]][c];
    if (std::fabs(d) < 1e-300) return false;
    for (int r = c + 1; r < 3; ++r) {
      const double f = M[idx[r]][c] / d;
      for (int k = c; k < 3; ++k) M[idx[r]][k] -= f * M[idx[c]][k];
      b[idx[r]] -= f * b[idx[c]];
    }
  }
  for (int c = 2; c >= 0; --c) {
    double s = b[idx[c]];
    for (int k = c + 1; k < 3; ++k) s -= M[idx[c]][k] * coef[std::size_t(k)];
    coef[std::size_t(c)] = s / M[idx[c]][c];
  }
  for (int i = 0; i < 3; ++i)
    if (!std::isfinite(coef[std::size_t(i)]) || coef[std::size_t(i)] < 0) return false;
  return true;
}

double log_rss(const std::vector<Point>& pts, const std::array<double, 3>& c) {
  double r = 0;
  for (const Point& p : pts) {
    const double f = c[0] + c[1] * p.x - c[2] * p.y;
    if (!(f > 0)) return std::numeric_limits<double>::infinity();
    const double d = std::log(f) - p.log_L;
    r += d * d;
  }
  return r;
}

// The best non-negative fit at one alpha over the 7 non-empty subsets of free coefficients.
double fit_at(std::vector<Point>& pts, double alpha, std::array<double, 3>& best) {
  for (Point& p : pts) {
    double x = 0;
    for (double log_f : p.log_forward) x += std::exp(-alpha * log_f);
    p.x = x / double(p.log_forward.size());
  }
  const Normal normal = normal_equations(pts);
  double best_rss = std::numeric_limits<double>::infinity();
  for (int mask = 1; mask < 8; ++mask) {
    const std::array<bool, 3> free{bool(mask & 1), bool(mask & 2), bool(mask & 4)};
    std::array<double, 3> c{0, 0, 0};
    if (!solve_subset(normal, free, c)) continue;
    const double r = log_rss(pts, c);
    if (r < best_rss) best_rss = r, best = c;
  }
  return best_rss;
}

}  // namespace

ScheduleAreas schedule_areas(const std::vector<long long>& steps, const std::vector<double>& lr) {
  ScheduleAreas a;
  a.forward.resize(steps.size());
  a.annealing.resize(steps.size());
  double s1 = 0, s2 = 0, m = 0, prev_eta = lr.empty() ? 1.0 : lr.front();
  long long prev_step = steps.empty() ? 0 : steps.front() - 1;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const double eta = lr.empty() ? 1.0 : lr[i];
    const double gap = double(std::max(1LL, steps[i] - prev_step));
    m = std::pow(kLawMomentum, gap) * m + (prev_eta - eta);
    s1 += eta * gap;
    s2 += m * gap;
    a.forward[i] = std::max(s1, 1e-12);
    a.annealing[i] = s2;
    prev_eta = eta, prev_step = steps[i];
  }
  return a;
}

double ScheduleLaw::operator()(double forward, double annealing) const {
  const double f = L0 + A * std::pow(forward, -alpha) - C * annealing;
  return std::clamp(f, lo, hi);
}

ScheduleLaw fit_schedule_law(const std::vector<double>& loss, const ScheduleAreas& areas, int n) {
  std::vector<Point> pts;
  double lo = std::numeric_limits<double>::infinity(), hi = 0;
  for (int begin = 0; begin + kBlock <= n; begin += kBlock) {
    Point p{0, 0, 0, 0, {}};
    double f = 0;
    for (int i = begin; i < begin + kBlock; ++i)
      p.L += loss[std::size_t(i)] / kBlock, f += areas.forward[std::size_t(i)] / kBlock,
          p.y += areas.annealing[std::size_t(i)] / kBlock;
    p.L = std::max(p.L, kMinLoss);
    p.log_L = std::log(p.L);
    const double first = areas.forward[std::size_t(begin)];
    if (areas.forward[std::size_t(begin + kBlock - 1)] > kExactRatio * first)
      for (int i = begin; i < begin + kBlock; ++i)
        p.log_forward.push_back(std::log(areas.forward[std::size_t(i)]));
    else
      p.log_forward.assign(1, std::log(f));
    lo = std::min(lo, p.L), hi = std::max(hi, p.L);
    pts.push_back(std::move(p));
  }
  ScheduleLaw law;
  if (pts.size() < 4) return law;
  double best = std::numeric_limits<double>::infinity();
  auto alpha_at = [](int k) { return 0.02 * std::pow(3.0 / 0.02, double(k) / (kAlphaGrid - 1)); };
  auto try_alpha = [&](double alpha) {
    std::array<double, 3> c{0, 0, 0};
    const double r = fit_at(pts, alpha, c);
    if (r < best) best = r, law.L0 = c[0], law.A = c[1], law.C = c[2], law.alpha = alpha;
    return r;
  };
  int best_k = 0;
  for (int k = 0; k < kAlphaGrid; ++k)
    if (try_alpha(alpha_at(k)) <= best) best_k = k;
  // Golden-section refinement between the best grid point's neighbours.
  double a = alpha_at(std::max(0, best_k - 1)), b = alpha_at(std::min(kAlphaGrid - 1, best_k + 1));
  const double g = (std::sqrt(5.0) - 1) / 2;
  for (int it = 0; it < kRefine; ++it) {
    const double c1 = b - g * (b - a), c2 = a + g * (b - a);
    if (try_alpha(c1) <= try_alpha(c2))
      b = c2;
    else
      a = c1;
  }
  law.ok = std::isfinite(best);
  law.lo = lo / kFloor, law.hi = hi * kCeiling;
  return law;
}

double forecast_law(const std::vector<long long>& steps, const std::vector<double>& loss,
                    const std::vector<double>& lr, const ScheduleAreas& areas,
                    const ScheduleLaw& law, int n, int h) {
  if (!law.ok) return forecast_last(loss, n);
  const long long t = steps[std::size_t(n - 1)];
  // Areas at each step of the target window: the run's own entries where it has them, else
  // extended from the origin with the last learning rate held (no further annealing).
  const double eta = lr.empty() ? 1.0 : lr[std::size_t(n - 1)];
  double sum = 0;
  for (long long s = t + h - kTargetBefore; s <= t + h + kTargetAfter; ++s) {
    const auto it = std::lower_bound(steps.begin(), steps.end(), s);
    if (it != steps.end() && *it == s) {
      const std::size_t i = std::size_t(it - steps.begin());
      sum += law(areas.forward[i], areas.annealing[i]);
    } else {
      const std::size_t o = std::size_t(n - 1);
      sum += law(areas.forward[o] + eta * double(s - t), areas.annealing[o]);
    }
  }
  return std::log(std::max(sum / double(kTargetBefore + kTargetAfter + 1), kMinLoss));
}

}  // namespace hpt::forecast
