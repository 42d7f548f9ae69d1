#pragma once
// Batch losses on the device, each one pass over the rows that also writes the gradient w.r.t. the
// model outputs and counts correct predictions. The sums are reduced in double and returned to the
// host together (one fence). Pass an empty `grad` View to skip the gradient (evaluation).
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <limits>

#include "core/launcher.hpp"
#include "core/error.hpp"
#include "core/math.hpp"
#include "core/types.hpp"
#include "kernels/sum_array.hpp"

namespace hpt {

struct LossValue {
  double loss = 0.0;      // mean over the batch (MSE: over batch and outputs)
  double accuracy = 0.0;  // fraction of rows whose argmax is right; NaN where undefined
};

namespace detail {
// Index of the largest entry of row i (the first one on ties).
template <class V>
KOKKOS_INLINE_FUNCTION int row_argmax(const V& m, std::int64_t i) {
  const int cols = int(m.extent(1));
  int best = 0;
  for (int j = 1; j < cols; ++j)
    if (m(i, j) > m(i, best)) best = j;
  return best;
}
}  // namespace detail

// Softmax cross-entropy, mean over the batch: L = 1/B sum_i [logsumexp(z_i) - z_i,label_i].
// grad = (softmax(z) - onehot(label)) / B. Stable: the row maximum is subtracted before exp.
// A label outside [0, classes) makes the loss NaN.
template <class Space, class Real>
HPT_LAUNCHER LossValue softmax_cross_entropy(const Space& space,
                                             View2<const Real, typename Space::memory_space> logits,
                                             View1<const int, typename Space::memory_space> labels,
                                             View2<Real, typename Space::memory_space> grad) {
  const std::int64_t batch = std::int64_t(logits.extent(0));
  const int classes = int(logits.extent(1));
  HPT_REQUIRE(batch > 0 && std::int64_t(labels.extent(0)) == batch,
              "softmax_cross_entropy: empty batch or labels of the wrong length");
  const bool write_grad = grad.extent(0) > 0;
  HPT_REQUIRE(
      !write_grad || (grad.extent(0) == logits.extent(0) && grad.extent(1) == logits.extent(1)),
      "softmax_cross_entropy: grad has the wrong shape");
  const Real inv_batch = Real(1) / Real(batch);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SumArray<2> sums;
  Kokkos::parallel_reduce(
      "hpt::softmax_cross_entropy", Kokkos::RangePolicy<Space>(space, 0, batch),
      KOKKOS_LAMBDA(const std::int64_t i, SumArray<2>& acc) {
        const int label = labels(i);
        const int best = detail::row_argmax(logits, i);
        const Real zmax = logits(i, best);
        Real denom = Real(0);
        for (int j = 0; j < classes; ++j) denom += math::exp(logits(i, j) - zmax);
        if (label < 0 || label >= classes) {
          acc.v[0] += nan;
        } else {
          acc.v[0] += double(math::log(denom) + zmax - logits(i, label));
          if (best == label) acc.v[1] += 1.0;
        }
        if (write_grad) {
          const Real inv_denom = Real(1) / denom;
          for (int j = 0; j < classes; ++j) {
            const Real p = math::exp(logits(i, j) - zmax) * inv_denom;
            grad(i, j) = (p - (j == label ? Real(1) : Real(0))) * inv_batch;
          }
        }
      },
      Kokkos::Sum<SumArray<2>>(sums));
  return LossValue{sums.v[0] / double(batch), sums.v[1] / double(batch)};
}

// Mean squared error over batch and outputs: L = 1/(B K) sum (p - t)^2, grad = 2 (p - t) / (B K).
// Accuracy: argmax(p) == argmax(t) per row when K > 1, NaN when K == 1.
template <class Space, class Real>
HPT_LAUNCHER LossValue mean_squared_error(const Space& space,
                                          View2<const Real, typename Space::memory_space> pred,
                                          View2<const Real, typename Space::memory_space> target,
                                          View2<Real, typename Space::memory_space> grad) {
  const std::int64_t batch = std::int64_t(pred.extent(0));
  const int outputs = int(pred.extent(1));
  HPT_REQUIRE(batch > 0 && target.extent(0) == pred.extent(0) && target.extent(1) == pred.extent(1),
              "mean_squared_error: empty batch or target of the wrong shape");
  const bool write_grad = grad.extent(0) > 0;
  HPT_REQUIRE(!write_grad || (grad.extent(0) == pred.extent(0) && grad.extent(1) == pred.extent(1)),
              "mean_squared_error: grad has the wrong shape");
  const Real scale = Real(2) / Real(double(batch) * outputs);
  SumArray<2> sums;
  Kokkos::parallel_reduce(
      "hpt::mean_squared_error", Kokkos::RangePolicy<Space>(space, 0, batch),
      KOKKOS_LAMBDA(const std::int64_t i, SumArray<2>& acc) {
        for (int j = 0; j < outputs; ++j) {
          const Real d = pred(i, j) - target(i, j);
          acc.v[0] += double(d) * double(d);
          if (write_grad) grad(i, j) = scale * d;
        }
        if (detail::row_argmax(pred, i) == detail::row_argmax(target, i)) acc.v[1] += 1.0;
      },
      Kokkos::Sum<SumArray<2>>(sums));
  const double accuracy =
      outputs > 1 ? sums.v[1] / double(batch) : std::numeric_limits<double>::quiet_NaN();
  return LossValue{sums.v[0] / (double(batch) * outputs), accuracy};
}

// MSE against one-hot targets built from class labels (regression onto the label's indicator).
// Accuracy: argmax(p) == label. A label outside [0, K) makes the loss NaN.
template <class Space, class Real>
HPT_LAUNCHER LossValue
mean_squared_error_onehot(const Space& space, View2<const Real, typename Space::memory_space> pred,
                          View1<const int, typename Space::memory_space> labels,
                          View2<Real, typename Space::memory_space> grad) {
  const std::int64_t batch = std::int64_t(pred.extent(0));
  const int outputs = int(pred.extent(1));
  HPT_REQUIRE(batch > 0 && std::int64_t(labels.extent(0)) == batch,
              "mean_squared_error_onehot: empty batch or labels of the wrong length");
  const bool write_grad = grad.extent(0) > 0;
  HPT_REQUIRE(!write_grad || (grad.extent(0) == pred.extent(0) && grad.extent(1) == pred.extent(1)),
              "mean_squared_error_onehot: grad has the wrong shape");
  const Real scale = Real(2) / Real(double(batch) * outputs);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  SumArray<2> sums;
  Kokkos::parallel_reduce(
      "hpt::mean_squared_error_onehot", Kokkos::RangePolicy<Space>(space, 0, batch),
      KOKKOS_LAMBDA(const std::int64_t i, SumArray<2>& acc) {
        const int label = labels(i);
        if (label < 0 || label >= outputs) acc.v[0] += nan;
        for (int j = 0; j < outputs; ++j) {
          const Real d = pred(i, j) - (j == label ? Real(1) : Real(0));
          acc.v[0] += double(d) * double(d);
          if (write_grad) grad(i, j) = scale * d;
        }
        if (detail::row_argmax(pred, i) == label) acc.v[1] += 1.0;
      },
      Kokkos::Sum<SumArray<2>>(sums));
  return LossValue{sums.v[0] / (double(batch) * outputs), sums.v[1] / double(batch)};
}

// Fraction of rows whose argmax equals the label.
template <class Space, class Real>
HPT_LAUNCHER double accuracy(const Space& space,
                             View2<const Real, typename Space::memory_space> scores,
                             View1<const int, typename Space::memory_space> labels) {
  const std::int64_t batch = std::int64_t(scores.extent(0));
  HPT_REQUIRE(batch > 0 && std::int64_t(labels.extent(0)) == batch,
              "accuracy: empty batch or labels of the wrong length");
  std::int64_t correct = 0;
  Kokkos::parallel_reduce(
      "hpt::accuracy", Kokkos::RangePolicy<Space>(space, 0, batch),
      KOKKOS_LAMBDA(const std::int64_t i, std::int64_t& acc) {
        if (detail::row_argmax(scores, i) == labels(i)) acc += 1;
      },
      correct);
  return double(correct) / double(batch);
}

}  // namespace hpt
