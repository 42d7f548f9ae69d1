#pragma once
// The host arithmetic of style `dmd` (dynamic mode decomposition of the parameter trajectory, the
// linear Koopman approximation of Schmid 2010 and Tu et al. 2014), from inner products alone.
// Given m displacements y_1 .. y_m between consecutive anchors (oldest first) through their Gram
// matrix G_ij = <y_i, y_j>, the pairs (y_i, y_i+1) of Y1 = [y_1 .. y_m-1] and Y2 = [y_2 .. y_m]
// define, in the rank-r POD basis U = Y1 V S^-1 of Y1 (V, S^2: the leading eigenpairs of Y1^T Y1),
// the reduced operator A = U^T Y2 V S^-1 = S^-1 V^T (Y1^T Y2) V S^-1. The displacement j anchors
// after the newest is U A^j U^T y_m; every such vector lies in the span of Y1, so the prediction is
// a linear combination of the anchors. A spectral radius above `max_radius` is scaled down to it:
// the predicted displacements never grow.
#include <vector>

namespace hpt {

struct DmdFit {
  int rank = 0;               // modes kept (0: no motion predicted)
  double radius = 0.0;        // spectral radius of the reduced operator, after the cap
  double raw_radius = 0.0;    // before the cap
  std::vector<double> basis;  // (m - 1) x rank, row-major: U = Y1 * basis
  std::vector<double> op;     // rank x rank, row-major: the reduced operator A
  std::vector<double> start;  // rank: U^T y_m

  // Coefficients c over Y1's columns of the predicted displacement j >= 1 anchors ahead.
  std::vector<double> displacement(int j) const;
  // Coefficients over Y1's columns of the predicted motion `periods` anchor spacings ahead
  // (periods >= 0, fractional: the last spacing's displacement taken in proportion).
  std::vector<double> motion(double periods) const;
};

// G: m x m Gram matrix of the displacements (row-major), m >= 2. Eigenvalues of Y1^T Y1 below
// `relative_floor` times the largest are dropped; at most `max_rank` modes are kept.
DmdFit fit_dmd(const std::vector<double>& gram, int m, int max_rank, double max_radius,
               double relative_floor = 1e-10);

// Eigen-decomposition of a symmetric n x n matrix (row-major) by cyclic Jacobi rotations:
// eigenvalues in descending order, eigenvectors as the columns of `vectors` (row-major n x n).
void symmetric_eigen(std::vector<double> a, int n, std::vector<double>& values,
                     std::vector<double>& vectors);

}  // namespace hpt
