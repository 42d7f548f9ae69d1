#include "physics-style-modules/dataset/dataset.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <sstream>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "kernels/dataset_kernels.hpp"

namespace hpt {

namespace {

// Stream of core/rng.hpp keys for the train/validation split: key(seed, kSplitStream, row).
constexpr std::uint64_t kSplitStream = 0x73706c6974ULL;

void check_raw(const RawData& raw) {
  HPT_REQUIRE(raw.rows >= 1 && raw.features >= 1 && raw.outputs >= 1,
              "dataset from " + raw.source + " has no rows, features or outputs");
  HPT_REQUIRE(raw.x.size() == std::size_t(raw.rows) * std::size_t(raw.features),
              "dataset from " + raw.source + ": feature array size does not match rows x features");
  if (raw.task == Task::Classification) {
    HPT_REQUIRE(raw.labels.size() == std::size_t(raw.rows) && raw.targets.empty(),
                "dataset from " + raw.source + ": label array size does not match rows");
    for (int label : raw.labels)
      HPT_REQUIRE(label >= 0 && label < raw.outputs,
                  "dataset from " + raw.source + ": label out of [0, classes)");
  } else {
    HPT_REQUIRE(raw.targets.size() == std::size_t(raw.rows) * std::size_t(raw.outputs) &&
                    raw.labels.empty(),
                "dataset from " + raw.source + ": target array size does not match rows x outputs");
  }
  if (raw.rows > std::numeric_limits<int>::max())
    throw InputError("dataset from " + raw.source + " has " + std::to_string(raw.rows) +
                     " rows; at most " + std::to_string(std::numeric_limits<int>::max()) +
                     " are supported");
}

// Copies the listed rows of a row-major host array (cols wide) into a new device View, optionally
// standardised column by column.
View2<real> rows_to_device(const std::string& label, const std::vector<double>& src, int cols,
                           const std::vector<std::int64_t>& rows, const std::vector<double>* mean,
                           const std::vector<double>* stdev) {
  View2<real> dev(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), rows.size(),
                  std::size_t(cols));
  auto host = Kokkos::create_mirror_view(dev);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const double* in = &src[std::size_t(rows[r]) * std::size_t(cols)];
    for (int c = 0; c < cols; ++c)
      host(r, c) = mean ? real((in[c] - (*mean)[c]) / (*stdev)[c]) : real(in[c]);
  }
  Kokkos::deep_copy(dev, host);
  return dev;
}

View1<int> labels_to_device(const std::string& label, const std::vector<int>& src,
                            const std::vector<std::int64_t>& rows) {
  View1<int> dev(Kokkos::view_alloc(Kokkos::WithoutInitializing, label), rows.size());
  auto host = Kokkos::create_mirror_view(dev);
  for (std::size_t r = 0; r < rows.size(); ++r) host(r) = src[std::size_t(rows[r])];
  Kokkos::deep_copy(dev, host);
  return dev;
}

}  // namespace

DatasetOptions dataset_options(const Config& config) {
  DatasetOptions o;
  o.val_fraction = config.get_real("dataset.val_fraction");
  o.probe_fraction = config.get_real("dataset.probe_fraction");
  o.standardize = config.get_bool("dataset.standardize");
  o.seed = std::uint64_t(config.get_int("dataset.seed"));
  return o;
}

Dataset::Dataset(std::string style, RawData raw, const DatasetOptions& options)
    : style_(std::move(style)),
      source_(raw.source),
      task_(raw.task),
      features_(raw.features),
      outputs_(raw.outputs),
      options_(options) {
  check_raw(raw);
  if (task_ == Task::Classification)
    largest_label_row_ =
        std::max_element(raw.labels.begin(), raw.labels.end()) - raw.labels.begin();
  HPT_REQUIRE(options.val_fraction >= 0.0 && options.probe_fraction >= 0.0 &&
                  options.val_fraction + options.probe_fraction < 1.0,
              "dataset.val_fraction and dataset.probe_fraction must be >= 0 with a sum below 1");

  // Split once: order the rows by a seeded hash, the first n_val go to validation, the next n_probe
  // to the probe part (so the validation rows do not depend on probe_fraction). At least one row
  // stays for training.
  const std::int64_t n = raw.rows;
  const std::int64_t n_val =
      std::min<std::int64_t>(std::llround(options.val_fraction * double(n)), n - 1);
  const std::int64_t n_probe =
      std::min<std::int64_t>(std::llround(options.probe_fraction * double(n)), n - 1 - n_val);
  std::vector<std::pair<std::uint64_t, std::int64_t>> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    order[std::size_t(i)] = {rng::key(options.seed, kSplitStream, std::uint64_t(i)), i};
  std::sort(order.begin(), order.end());
  for (std::int64_t i = 0; i < n; ++i)
    (i < n_val             ? val_rows_
     : i < n_val + n_probe ? probe_rows_
                           : train_rows_)
        .push_back(order[std::size_t(i)].second);
  std::sort(val_rows_.begin(), val_rows_.end());
  std::sort(probe_rows_.begin(), probe_rows_.end());
  std::sort(train_rows_.begin(), train_rows_.end());

  // Standardisation statistics from the train part only (population std, in double).
  if (options.standardize) {
    const std::size_t f = std::size_t(features_);
    mean_.assign(f, 0.0);
    std_.assign(f, 0.0);
    for (std::int64_t r : train_rows_)
      for (std::size_t c = 0; c < f; ++c) mean_[c] += raw.x[std::size_t(r) * f + c];
    for (std::size_t c = 0; c < f; ++c) mean_[c] /= double(train_rows_.size());
    for (std::int64_t r : train_rows_)
      for (std::size_t c = 0; c < f; ++c) {
        const double d = raw.x[std::size_t(r) * f + c] - mean_[c];
        std_[c] += d * d;
      }
    for (std::size_t c = 0; c < f; ++c) {
      std_[c] = std::sqrt(std_[c] / double(train_rows_.size()));
      if (!(std_[c] > 0.0)) std_[c] = 1.0;  // a constant column (e.g. a digits border pixel)
    }
  }
  const auto* mean = options.standardize ? &mean_ : nullptr;
  const auto* stdev = options.standardize ? &std_ : nullptr;
  // One part's device copies: features, and labels or targets (the other left empty).
  const bool cls = task_ == Task::Classification;
  auto copy_part = [&](const std::string& part, const std::vector<std::int64_t>& rows,
                       View2<real>& x, View1<int>& labels, View2<real>& targets) {
    x = rows_to_device("hpt::dataset_x_" + part, raw.x, features_, rows, mean, stdev);
    labels = cls ? labels_to_device("hpt::dataset_labels_" + part, raw.labels, rows)
                 : View1<int>("hpt::dataset_labels_" + part, 0);
    targets = cls ? View2<real>("hpt::dataset_targets_" + part, 0, 0)
                  : rows_to_device("hpt::dataset_targets_" + part, raw.targets, outputs_, rows,
                                   nullptr, nullptr);
  };
  copy_part("train", train_rows_, x_train_, labels_train_, targets_train_);
  copy_part("val", val_rows_, x_val_, labels_val_, targets_val_);
  copy_part("probe", probe_rows_, x_probe_, labels_probe_, targets_probe_);
}

const MiniBatch& Dataset::next_batch(int batch_size) {
  HPT_REQUIRE(batch_size >= 1, "batch size must be at least 1");
  HPT_REQUIRE(batch_size % shard_ranks_ == 0, "a global batch of " + std::to_string(batch_size) +
                                                  " rows does not split into " +
                                                  std::to_string(shard_ranks_) + " equal shards");
  const int rows = batch_size / shard_ranks_;
  if (batch_.x.extent(0) != std::size_t(rows)) {
    const bool cls = task_ == Task::Classification;
    batch_.x = View2<real>("hpt::dataset_batch_x", rows, features_);
    batch_.labels = View1<int>("hpt::dataset_batch_labels", cls ? rows : 0);
    batch_.targets = View2<real>("hpt::dataset_batch_targets", cls ? 0 : rows, cls ? 0 : outputs_);
    batch_.rows = View1<int>("hpt::dataset_batch_rows", rows);
  }
  dataset::gather_batch<ExecSpace, real>(ExecSpace(), options_.seed, cursor_.epoch,
                                         cursor_.position + std::int64_t(shard_rank_) * rows,
                                         x_train_, labels_train_, targets_train_, batch_.x,
                                         batch_.labels, batch_.targets, batch_.rows);
  const std::int64_t stream = cursor_.position + batch_size;
  cursor_.epoch += stream / train_size();
  cursor_.position = stream % train_size();
  return batch_;
}

void Dataset::set_shard(int rank, int ranks) {
  HPT_REQUIRE(ranks >= 1 && rank >= 0 && rank < ranks, "Dataset::set_shard: rank out of range");
  shard_rank_ = rank;
  shard_ranks_ = ranks;
}

void Dataset::set_cursor(BatchCursor cursor) {
  if (cursor.epoch < 0 || cursor.position < 0 || cursor.position >= train_size())
    throw InputError("dataset batch cursor (epoch " + std::to_string(cursor.epoch) + ", position " +
                     std::to_string(cursor.position) +
                     ") is out of range: expected epoch >= 0 and position in [0, " +
                     std::to_string(train_size()) + ") (a checkpoint of another data set?)");
  cursor_ = cursor;
}

std::int64_t Dataset::shuffled_row(std::int64_t epoch, std::int64_t position) const {
  HPT_REQUIRE(position >= 0 && position < train_size(), "shuffled_row position out of range");
  return dataset::epoch_row(options_.seed, epoch, position, train_size());
}

std::string Dataset::summary() const {
  std::ostringstream os;
  os << "dataset " << style_;
  if (source_ != style_) os << " (" << source_ << ")";
  os << ": " << size() << " rows x " << features_ << " features, " << task_name(task_) << " with "
     << outputs_ << (task_ == Task::Classification ? " classes" : " outputs") << "; train "
     << train_size() << ", validation " << val_size();
  if (probe_size() > 0) os << ", probe " << probe_size();
  os << (options_.standardize ? ", standardised" : "");
  return os.str();
}

}  // namespace hpt
