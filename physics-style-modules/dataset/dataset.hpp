#pragma once
// A training data set (docs/method.md#training-problems): rows from a style (RawData), split once
// into train, validation and (optionally) probe parts by a seeded permutation, optionally
// standardised with train statistics,
// copied to the device once, and served as shuffled minibatches gathered on the device into
// preallocated Views.
//
// Every style differs only in where its rows come from, so Dataset is one concrete class built from
// RawData; a style is a factory Config -> Dataset registered by name
// (physics-style-modules/dataset/register.hpp).
#include <cstdint>
#include <string>
#include <vector>

#include "core/types.hpp"
#include "core/raw_data.hpp"

namespace hpt {

class Config;

struct DatasetOptions {
  double val_fraction = 0.2;  // fraction of rows held out for validation
  double probe_fraction = 0;  // fraction held out from both for the hybrid loop's probe set
  bool standardize = true;    // z-score features with the train part's mean and std
  std::uint64_t seed = 1;     // split permutation and per-epoch shuffles
};

// dataset.val_fraction, dataset.probe_fraction, dataset.standardize, dataset.seed.
DatasetOptions dataset_options(const Config& config);

// Where the minibatch stream stands: the next batch starts at `position` of the shuffled `epoch`.
// A checkpoint stores only these two numbers.
struct BatchCursor {
  std::int64_t epoch = 0;
  std::int64_t position = 0;
};

// One minibatch on the device. Views are allocated once per batch size and refilled by next_batch.
struct MiniBatch {
  View2<real> x;        // batch x features
  View1<int> labels;    // batch (classification; extent 0 for regression)
  View2<real> targets;  // batch x outputs (regression; extent 0 x 0 for classification)
  View1<int> rows;      // the train row (index into x_train) of each batch row
};

class Dataset {
 public:
  Dataset(std::string style, RawData raw, const DatasetOptions& options);

  const std::string& style() const { return style_; }
  const std::string& source() const { return source_; }
  Task task() const { return task_; }
  int features() const { return features_; }
  int outputs() const { return outputs_; }  // classes, or target columns for regression
  // Classification: the first row (0-based, in the file's order) holding the largest label, which
  // sets outputs() = largest label + 1; -1 for regression.
  std::int64_t largest_label_row() const { return largest_label_row_; }
  std::int64_t size() const { return train_size() + val_size() + probe_size(); }
  std::int64_t train_size() const { return std::int64_t(train_rows_.size()); }
  std::int64_t val_size() const { return std::int64_t(val_rows_.size()); }
  // Rows of the probe split (0 unless options().probe_fraction > 0).
  std::int64_t probe_size() const { return std::int64_t(probe_rows_.size()); }
  const DatasetOptions& options() const { return options_; }

  // Device data of each part; labels are empty for regression, targets empty for classification.
  const View2<real>& x_train() const { return x_train_; }
  const View2<real>& x_val() const { return x_val_; }
  const View1<int>& labels_train() const { return labels_train_; }
  const View1<int>& labels_val() const { return labels_val_; }
  const View2<real>& targets_train() const { return targets_train_; }
  const View2<real>& targets_val() const { return targets_val_; }
  const View2<real>& x_probe() const { return x_probe_; }
  const View1<int>& labels_probe() const { return labels_probe_; }
  const View2<real>& targets_probe() const { return targets_probe_; }

  // Prototype row index (in RawData) of each train / validation row, ascending.
  const std::vector<std::int64_t>& train_rows() const { return train_rows_; }
  const std::vector<std::int64_t>& val_rows() const { return val_rows_; }
  const std::vector<std::int64_t>& probe_rows() const { return probe_rows_; }
  // Standardisation statistics of the train part (population std; a constant column gets std 1).
  // Empty when standardize is off.
  const std::vector<double>& feature_mean() const { return mean_; }
  const std::vector<double>& feature_std() const { return std_; }

  // Gathers the next batch_size train rows of the shuffled stream on the device (crossing into the
  // next epoch when one ends, so every batch is full) and advances the cursor. Allocates only when
  // batch_size differs from the previous call's. With a shard set, batch_size is the global batch:
  // this process gathers only its contiguous part of it and the cursor still moves by batch_size.
  const MiniBatch& next_batch(int batch_size);
  // Data-parallel training: process `rank` of `ranks` takes rows [rank * B / ranks, (rank + 1) * B
  // / ranks) of every global batch of B rows (B must be divisible by ranks; checked by next_batch).
  void set_shard(int rank, int ranks);
  const MiniBatch& last_batch() const { return batch_; }

  BatchCursor cursor() const { return cursor_; }
  // Continues the stream from a saved cursor (checkpoint restart); InputError if out of range.
  void set_cursor(BatchCursor cursor);
  // Train row at `position` of the shuffled `epoch` (what next_batch gathers), on the host.
  std::int64_t shuffled_row(std::int64_t epoch, std::int64_t position) const;

  // One line for the console: style, source, sizes, task.
  std::string summary() const;

 private:
  std::string style_, source_;
  Task task_;
  int features_ = 0, outputs_ = 0;
  std::int64_t largest_label_row_ = -1;
  DatasetOptions options_;
  std::vector<std::int64_t> train_rows_, val_rows_, probe_rows_;
  std::vector<double> mean_, std_;
  View2<real> x_train_, x_val_, x_probe_, targets_train_, targets_val_, targets_probe_;
  View1<int> labels_train_, labels_val_, labels_probe_;
  MiniBatch batch_;
  BatchCursor cursor_;
  int shard_rank_ = 0, shard_ranks_ = 1;
};

}  // namespace hpt
