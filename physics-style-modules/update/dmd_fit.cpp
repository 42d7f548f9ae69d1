#include "physics-style-modules/update/dmd_fit.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/error.hpp"

namespace hpt {

namespace {

using Mat = std::vector<double>;  // row-major

Mat multiply(const Mat& a, const Mat& b, int n) {
  Mat c(std::size_t(n * n), 0.0);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < n; ++k)
      for (int j = 0; j < n; ++j)
        c[std::size_t(i * n + j)] += a[std::size_t(i * n + k)] * b[std::size_t(k * n + j)];
  return c;
}

double frobenius(const Mat& a) {
  return std::sqrt(std::inner_product(a.begin(), a.end(), a.begin(), 0.0));
}

// The spectral radius of an n x n matrix from the Frobenius norm of its 2^12-th power (repeated
// squaring, the scale kept in logarithms): for a normal matrix within a factor n^(1/8192) of the
// true radius, close for the small operators of a fit.
double spectral_radius(const Mat& a, int n) {
  double norm = frobenius(a);
  if (!(norm > 0.0)) return 0.0;
  Mat b = a;
  for (double& v : b) v /= norm;
  double log_scale = std::log(norm);
  constexpr int kSquarings = 12;
  for (int s = 0; s < kSquarings; ++s) {
    b = multiply(b, b, n);
    norm = frobenius(b);
    if (!(norm > 0.0)) return 0.0;  // nilpotent
    for (double& v : b) v /= norm;
    log_scale = 2.0 * log_scale + std::log(norm);
  }
  return std::exp(log_scale / double(1 << kSquarings));
}

}  // namespace

void symmetric_eigen(Mat a, int n, std::vector<double>& values, Mat& vectors) {
  Mat v(std::size_t(n * n), 0.0);
  for (int i = 0; i < n; ++i) v[std::size_t(i * n + i)] = 1.0;
  const auto at = [n](Mat& m, int i, int j) -> double& { return m[std::size_t(i * n + j)]; };
  for (int sweep = 0; sweep < 100; ++sweep) {
    double off = 0.0, total = 0.0;
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) (i == j ? total : off) += at(a, i, j) * at(a, i, j);
    if (off <= 1e-30 * (off + total)) break;
    for (int p = 0; p < n; ++p)
      for (int q = p + 1; q < n; ++q) {
        if (at(a, p, q) == 0.0) continue;
        // The rotation that zeroes a_pq (Golub & Van Loan, Algorithm 8.4.1).
        const double tau = (at(a, q, q) - at(a, p, p)) / (2.0 * at(a, p, q));
        const double t = (tau >= 0 ? 1.0 : -1.0) / (std::fabs(tau) + std::sqrt(1.0 + tau * tau));
        const double c = 1.0 / std::sqrt(1.0 + t * t), s = t * c;
        for (int k = 0; k < n; ++k) {  // A <- A J
          const double x = at(a, k, p), y = at(a, k, q);
          at(a, k, p) = c * x - s * y, at(a, k, q) = s * x + c * y;
        }
        for (int k = 0; k < n; ++k) {  // A <- J^T A
          const double x = at(a, p, k), y = at(a, q, k);
          at(a, p, k) = c * x - s * y, at(a, q, k) = s * x + c * y;
        }
        for (int k = 0; k < n; ++k) {  // V <- V J
          const double x = at(v, k, p), y = at(v, k, q);
          at(v, k, p) = c * x - s * y, at(v, k, q) = s * x + c * y;
        }
      }
  }
  std::vector<int> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int x, int y) { return at(a, x, x) > at(a, y, y); });
  values.assign(std::size_t(n), 0.0);
  vectors.assign(std::size_t(n * n), 0.0);
  for (int c = 0; c < n; ++c) {
    values[std::size_t(c)] = at(a, order[std::size_t(c)], order[std::size_t(c)]);
    for (int k = 0; k < n; ++k) at(vectors, k, c) = at(v, k, order[std::size_t(c)]);
  }
}

DmdFit fit_dmd(const std::vector<double>& gram, int m, int max_rank, double max_radius,
               double relative_floor) {
  HPT_REQUIRE(m >= 2 && gram.size() == std::size_t(m * m) && max_rank >= 1,
              "fit_dmd: needs at least two displacements and a positive rank");
  const int p = m - 1;  // columns of Y1
  const auto g = [&](int i, int j) { return gram[std::size_t(i * m + j)]; };
  Mat g1(std::size_t(p * p));
  for (int i = 0; i < p; ++i)
    for (int j = 0; j < p; ++j) g1[std::size_t(i * p + j)] = g(i, j);
  std::vector<double> lambda;
  Mat vecs;
  symmetric_eigen(g1, p, lambda, vecs);
  DmdFit fit;
  if (!(lambda[0] > 0.0)) return fit;  // no motion at all
  int r = 0;
  while (r < std::min(max_rank, p) && lambda[std::size_t(r)] > relative_floor * lambda[0]) ++r;
  fit.rank = r;
  // basis = V_r S^-1: U = Y1 V_r S^-1.
  fit.basis.assign(std::size_t(p * r), 0.0);
  for (int i = 0; i < p; ++i)
    for (int c = 0; c < r; ++c)
      fit.basis[std::size_t(i * r + c)] =
          vecs[std::size_t(i * p + c)] / std::sqrt(lambda[std::size_t(c)]);
  // A = basis^T (Y1^T Y2) basis with (Y1^T Y2)_ij = <y_i, y_j+1>; start = basis^T (Y1^T y_m).
  fit.op.assign(std::size_t(r * r), 0.0);
  fit.start.assign(std::size_t(r), 0.0);
  for (int a = 0; a < r; ++a) {
    for (int i = 0; i < p; ++i) {
      const double ba = fit.basis[std::size_t(i * r + a)];
      fit.start[std::size_t(a)] += ba * g(i, m - 1);
      for (int j = 0; j < p; ++j)
        for (int b = 0; b < r; ++b)
          fit.op[std::size_t(a * r + b)] += ba * g(i, j + 1) * fit.basis[std::size_t(j * r + b)];
    }
  }
  fit.raw_radius = fit.radius = spectral_radius(fit.op, r);
  if (fit.radius > max_radius) {
    for (double& v : fit.op) v *= max_radius / fit.radius;
    fit.radius = max_radius;
  }
  return fit;
}

namespace {

// z <- A z (r x r, row-major).
std::vector<double> apply_operator(const std::vector<double>& op, const std::vector<double>& z) {
  const std::size_t r = z.size();
  std::vector<double> out(r, 0.0);
  for (std::size_t a = 0; a < r; ++a)
    for (std::size_t b = 0; b < r; ++b) out[a] += op[a * r + b] * z[b];
  return out;
}

// w += f * basis z: a displacement in the reduced coordinates z, as coefficients over Y1's columns.
void add_displacement(std::vector<double>& w, double f, const std::vector<double>& basis,
                      const std::vector<double>& z) {
  const std::size_t r = z.size();
  for (std::size_t i = 0; i < w.size(); ++i)
    for (std::size_t a = 0; a < r; ++a) w[i] += f * basis[i * r + a] * z[a];
}

}  // namespace

std::vector<double> DmdFit::displacement(int j) const {
  std::vector<double> z = start, c(rank > 0 ? basis.size() / std::size_t(rank) : 0, 0.0);
  for (int s = 0; s < j; ++s) z = apply_operator(op, z);
  add_displacement(c, 1.0, basis, z);
  return c;
}

std::vector<double> DmdFit::motion(double periods) const {
  std::vector<double> w(rank > 0 ? basis.size() / std::size_t(rank) : 0, 0.0);
  const int whole = int(std::floor(periods));
  const double part = periods - double(whole);
  std::vector<double> z = start;  // z_j = A^j z_0: one product per spacing
  for (int j = 1; j <= whole + (part > 0.0 ? 1 : 0); ++j) {
    z = apply_operator(op, z);
    add_displacement(w, j <= whole ? 1.0 : part, basis, z);
  }
  return w;
}

}  // namespace hpt
