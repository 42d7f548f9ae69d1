#include "train/evaluation.hpp"

#include <algorithm>
#include <limits>

namespace hpt::train {

Evaluation evaluate_validation_rows(Model& model, const Dataset& d, std::int64_t rows) {
  const std::int64_t n = rows > 0 ? std::min(rows, d.val_size()) : d.val_size();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n == 0) return {nan, nan};
  Evaluation ev;
  for (std::int64_t begin = 0; begin < n; begin += kEvaluationChunk) {
    const auto range = std::make_pair(begin, std::min<std::int64_t>(n, begin + kEvaluationChunk));
    Model::batch_type b;
    b.x = Kokkos::subview(d.x_val(), range, Kokkos::ALL());
    if (d.labels_val().extent(0) > 0) b.labels = Kokkos::subview(d.labels_val(), range);
    if (d.targets_val().extent(0) > 0)
      b.targets = Kokkos::subview(d.targets_val(), range, Kokkos::ALL());
    const LossValue lv = model.forward(b);
    const double m = double(range.second - range.first);
    ev.loss += lv.loss * m;
    ev.accuracy += lv.accuracy * m;
  }
  ev.loss /= double(n);
  ev.accuracy /= double(n);
  return ev;
}

}  // namespace hpt::train
