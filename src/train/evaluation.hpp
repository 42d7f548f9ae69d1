#pragma once
// Forward passes over a held-out part of the data set, in chunks: the validation of the trainer and
// the hybrid loop's fixed probe set. On several processes each evaluates its contiguous shard of
// the rows and one allreduce of (loss sum, accuracy sum, rows) gives every process the same mean.
#include <cstdint>

#include "core/communicator.hpp"
#include "physics-style-modules/dataset/dataset.hpp"
#include "physics-style-modules/model/model.hpp"

namespace hpt::train {

// Loss and accuracy, each the mean over the rows evaluated (NaN when there are none).
struct Evaluation {
  double loss = 0, accuracy = 0;
};

// Rows per forward pass; the model must have reserved this many (or evaluation_rows_reserved).
constexpr int kEvaluationChunk = 1024;

// The first `rows` validation rows (all of them when rows <= 0 or beyond the validation size).
Evaluation evaluate_validation_rows(Model& model, const Dataset& dataset, const Communicator& comm,
                                    std::int64_t rows = 0);

// The probe set: the first `rows` of the probe part, or of the validation part when the data set
// has no probe part (dataset.probe_fraction = 0).
Evaluation evaluate_probe_rows(Model& model, const Dataset& dataset, const Communicator& comm,
                               std::int64_t rows);

// The largest forward pass either evaluation makes on this data set.
int evaluation_rows_reserved(const Dataset& dataset);

}  // namespace hpt::train
