#include "train/evaluation.hpp"

#include <algorithm>
#include <limits>

namespace hpt::train {

namespace {

// Mean loss and accuracy over the first `rows` rows of one held-out part (all when rows <= 0).
Evaluation evaluate_rows(Model& model, const View2<real>& x, const View1<int>& labels,
                         const View2<real>& targets, std::int64_t rows) {
  const std::int64_t size = std::int64_t(x.extent(0));
  const std::int64_t n = rows > 0 ? std::min(rows, size) : size;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n == 0) return {nan, nan};
  Evaluation ev;
  for (std::int64_t begin = 0; begin < n; begin += kEvaluationChunk) {
    const auto range = std::make_pair(begin, std::min<std::int64_t>(n, begin + kEvaluationChunk));
    Model::batch_type b;
    b.x = Kokkos::subview(x, range, Kokkos::ALL());
    if (labels.extent(0) > 0) b.labels = Kokkos::subview(labels, range);
    if (targets.extent(0) > 0) b.targets = Kokkos::subview(targets, range, Kokkos::ALL());
    const LossValue lv = model.forward(b);
    const double m = double(range.second - range.first);
    ev.loss += lv.loss * m;
    ev.accuracy += lv.accuracy * m;
  }
  ev.loss /= double(n);
  ev.accuracy /= double(n);
  return ev;
}

}  // namespace

Evaluation evaluate_validation_rows(Model& model, const Dataset& d, std::int64_t rows) {
  return evaluate_rows(model, d.x_val(), d.labels_val(), d.targets_val(), rows);
}

Evaluation evaluate_probe_rows(Model& model, const Dataset& d, std::int64_t rows) {
  if (d.probe_size() == 0) return evaluate_validation_rows(model, d, rows);
  return evaluate_rows(model, d.x_probe(), d.labels_probe(), d.targets_probe(), rows);
}

int evaluation_rows_reserved(const Dataset& d) {
  return int(std::min<std::int64_t>(kEvaluationChunk, std::max(d.val_size(), d.probe_size())));
}

}  // namespace hpt::train
