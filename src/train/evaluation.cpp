#include "train/evaluation.hpp"

#include <algorithm>
#include <limits>

namespace hpt::train {

namespace {

// Loss and accuracy summed over rows [begin, end) of one held-out part, and how many rows.
struct RowSums {
  double loss = 0, accuracy = 0, rows = 0;
};

RowSums sum_rows(Model& model, const View2<real>& x, const View1<int>& labels,
                 const View2<real>& targets, std::int64_t begin, std::int64_t end) {
  RowSums s;
  for (std::int64_t b = begin; b < end; b += kEvaluationChunk) {
    const auto range = std::make_pair(b, std::min<std::int64_t>(end, b + kEvaluationChunk));
    Model::batch_type batch;
    batch.x = Kokkos::subview(x, range, Kokkos::ALL());
    if (labels.extent(0) > 0) batch.labels = Kokkos::subview(labels, range);
    if (targets.extent(0) > 0) batch.targets = Kokkos::subview(targets, range, Kokkos::ALL());
    const LossValue lv = model.forward(batch);
    const double m = double(range.second - range.first);
    s.loss += lv.loss * m;
    s.accuracy += lv.accuracy * m;
    s.rows += m;
  }
  return s;
}

// Mean loss and accuracy over the first `rows` rows of one held-out part (all when rows <= 0):
// process r of N sums rows [r n / N, (r + 1) n / N), one allreduce adds the shards' sums.
Evaluation evaluate_rows(Model& model, const Communicator& comm, const View2<real>& x,
                         const View1<int>& labels, const View2<real>& targets, std::int64_t rows) {
  const std::int64_t size = std::int64_t(x.extent(0));
  const std::int64_t n = rows > 0 ? std::min(rows, size) : size;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (n == 0) return {nan, nan};
  const std::int64_t ranks = comm.size(), r = comm.rank();
  RowSums s = sum_rows(model, x, labels, targets, r * n / ranks, (r + 1) * n / ranks);
  double sums[3] = {s.loss, s.accuracy, s.rows};
  comm.allreduce_sum(sums, 3, Traffic::Evaluation);
  return {sums[0] / sums[2], sums[1] / sums[2]};
}

}  // namespace

Evaluation evaluate_validation_rows(Model& model, const Dataset& d, const Communicator& comm,
                                    std::int64_t rows) {
  return evaluate_rows(model, comm, d.x_val(), d.labels_val(), d.targets_val(), rows);
}

Evaluation evaluate_probe_rows(Model& model, const Dataset& d, const Communicator& comm,
                               std::int64_t rows) {
  if (d.probe_size() == 0) return evaluate_validation_rows(model, d, comm, rows);
  return evaluate_rows(model, comm, d.x_probe(), d.labels_probe(), d.targets_probe(), rows);
}

int evaluation_rows_reserved(const Dataset& d) {
  return int(std::min<std::int64_t>(kEvaluationChunk, std::max(d.val_size(), d.probe_size())));
}

}  // namespace hpt::train
