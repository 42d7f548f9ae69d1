#include "train/trace_file.hpp"

#include <algorithm>
#include <filesystem>

#include "core/types.hpp"

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/communication_attributes.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_table.hpp"

namespace fs = std::filesystem;

namespace hpt::train {

namespace {

std::vector<io::H5Column> trace_columns() {
  std::vector<io::H5Column> c;
  for (const auto& n : TraceFile::column_names())
    c.push_back({n, (n == "step" || n == "phase" || n == "backward" || n == "block_horizon" ||
                     n == "verdict")
                        ? io::H5Element::Int64
                        : io::H5Element::Float64});
  return c;
}

const char* kEventLegend =
    "0 start, 1 restart, 2 checkpoint, 3 signal stop, 4 non-finite stop, 5 end, 6 predict start, "
    "7 predict accepted, 8 rollback, 9 divergence warning, 10 divergence critical, 11 predict "
    "step scale";

std::vector<io::H5Column> forecast_columns() {
  std::vector<io::H5Column> c;
  for (const char* n : {"origin", "horizon", "resolved", "inside"})
    c.push_back({n, io::H5Element::Int64});
  for (const char* n : {"mean", "q05", "q50", "q95", "target", "width_factor"})
    c.push_back({n, io::H5Element::Float64});
  return c;
}

// Keeps the leading rows of `table` whose `column` (non-decreasing) is <= `last`; returns them.
std::size_t truncate_after(io::H5File& f, const std::string& table, const std::string& column,
                           std::int64_t last) {
  io::H5Table t = io::H5Table::open(f.root(), table);
  std::vector<std::int64_t> v(t.rows());
  if (!v.empty())
    f.root().read_dataset(table + "/" + column, io::H5Element::Int64, v.data(), {v.size()});
  std::size_t keep = 0;
  while (keep < v.size() && v[keep] <= last) ++keep;
  t.truncate(keep);
  t.flush();
  return keep;
}

// Writes the header and empty tables of a fresh trace into `f`.
void create_trace(io::H5File& f, const std::string& deck) {
  io::write_hpt_header(f, io::HptFileKind::Trace, deck);
  io::H5Table steps = io::H5Table::create(f.root(), "steps", trace_columns());
  io::H5Table events = io::H5Table::create(f.root(), "events",
                                           {{"step", io::H5Element::Int64},
                                            {"kind", io::H5Element::Int64},
                                            {"value", io::H5Element::Float64}});
  events.group().write_string_attribute("kinds", kEventLegend);
  io::H5Table forecasts = io::H5Table::create(f.root(), "forecasts", forecast_columns());
  forecasts.group().write_string_attribute(
      "description",
      "scored forecasts of the training forecaster: made at `origin` for the log of the mean "
      "loss over steps origin+horizon-4 .. origin+horizon+5, calibrated 90 % interval [q05, q95], "
      "realised `target`, `inside` 1/0, scored at step `resolved`");
  steps.flush();
  events.flush();
  forecasts.flush();
  io::H5Appendable::create(f.root(), "features", io::H5Element::Float64, {std::size_t(kFeatures)});
}

void write_data_parallel(io::H5File& f, const DataParallelRecord& r) {
  io::H5Group g = f.root().has_group("data_parallel") ? f.root().open_group("data_parallel")
                                                      : f.root().create_group("data_parallel");
  g.write_int_attribute("ranks", r.ranks);
  g.write_int_attribute("since_step", r.since_step);
  g.write_int_attribute("checked_step", r.checked_step);
  io::write_communication(g, r.communication, "");
  const auto as_int = [](const std::vector<std::uint64_t>& v) {
    return std::vector<std::int64_t>(v.begin(), v.end());
  };
  g.write_vector_attribute("parameter_checksums", as_int(r.digests.parameters));
  g.write_vector_attribute("decision_checksums", as_int(r.digests.decisions));
}

// Lets `edit` change a copy of `path`, then renames the copy over `path` (AtomicH5Writer).
template <class Edit>
void edit_atomically(const std::string& path, Edit&& edit) {
  io::AtomicH5Writer writer(path, io::AtomicStart::CopyOfExisting);
  edit(writer.file());
  writer.commit();
}

}  // namespace

const std::vector<std::string>& TraceFile::column_names() {
  static const std::vector<std::string> names = {
      "step",          "phase",         "loss",        "val_loss",   "val_accuracy", "grad_norm",
      "update_norm",   "weight_norm",   "update_cos",  "lr",         "wall_time",    "backward",
      "block_horizon", "forecast_mean", "forecast_hi", "confidence", "verdict"};
  return names;
}

TraceFile::TraceFile(std::string path, std::string deck, std::int64_t resume_step)
    : path_(std::move(path)), deck_(std::move(deck)) {
  if (path_.empty()) return;
  if (resume_step < 0 || !fs::exists(path_)) {
    io::AtomicH5Writer writer(path_);
    create_trace(writer.file(), deck_);
    writer.commit();
    return;
  }
  io::open_hpt_file(path_, io::HptFileKind::Trace);  // checks kind and version
  edit_atomically(path_, [&](io::H5File& f) {
    const std::size_t keep = truncate_after(f, "steps", "step", resume_step);
    io::H5Appendable features =
        io::H5Appendable::open(f.root(), "features", io::H5Element::Float64);
    features.resize(std::min(keep, features.rows()));
    // Events and scored forecasts past the checkpoint belong to the part of the run done again.
    truncate_after(f, "events", "step", resume_step);
    truncate_after(f, "forecasts", "resolved", resume_step);
  });
}

void TraceFile::event(std::int64_t step, TraceEvent kind, double value) {
  events_.push_back({step, kind, value});
}

void TraceFile::set_data_parallel(const DataParallelRecord& record) {
  data_parallel_ = record;
  data_parallel_pending_ = true;
}

void TraceFile::flush() {
  if (path_.empty()) {
    rows_.clear(), events_.clear(), forecasts_.clear();
    return;
  }
  if (rows_.empty() && events_.empty() && forecasts_.empty() && !data_parallel_pending_) return;
  edit_atomically(path_, [&](io::H5File& f) {
    io::H5Table steps = io::H5Table::open(f.root(), "steps");
    for (const auto& r : rows_)
      steps.append_row({r.step, r.phase, r.loss, r.val_loss, r.val_accuracy, r.grad_norm,
                        r.update_norm, r.weight_norm, r.update_cos, r.lr, r.wall_time, r.backward,
                        r.block_horizon, r.forecast_mean, r.forecast_hi, r.confidence, r.verdict});
    steps.flush();
    io::H5Appendable features =
        io::H5Appendable::open(f.root(), "features", io::H5Element::Float64);
    std::vector<double> block;
    for (const auto& r : rows_) {
      HPT_REQUIRE(r.features.size() == std::size_t(kFeatures), "trace row without its features");
      block.insert(block.end(), r.features.begin(), r.features.end());
    }
    if (!block.empty()) features.append(block);
    io::H5Table events = io::H5Table::open(f.root(), "events");
    for (const auto& e : events_) events.append_row({e.step, std::int64_t(e.kind), e.value});
    events.flush();
    io::H5Table forecasts = io::H5Table::open(f.root(), "forecasts");
    for (const auto& r : forecasts_)
      forecasts.append_row({r.origin, r.horizon, r.resolved, std::int64_t(r.inside), r.mean, r.q05,
                            r.q50, r.q95, r.target, r.width_factor});
    forecasts.flush();
    if (data_parallel_pending_) write_data_parallel(f, data_parallel_);
  });
  data_parallel_pending_ = false;
  rows_.clear();
  events_.clear();
  forecasts_.clear();
}

}  // namespace hpt::train
