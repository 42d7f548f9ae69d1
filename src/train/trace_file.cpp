#include "train/trace_file.hpp"

#include <algorithm>
#include <filesystem>

#include "core/types.hpp"

#include "core/error.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_table.hpp"

namespace fs = std::filesystem;

namespace hpt::train {

namespace {

std::vector<io::H5Column> trace_columns() {
  std::vector<io::H5Column> c;
  for (const auto& n : TraceFile::column_names())
    c.push_back({n, (n == "step" || n == "phase") ? io::H5Element::Int64 : io::H5Element::Float64});
  return c;
}

const char* kEventLegend =
    "0 start, 1 restart, 2 checkpoint, 3 signal stop, 4 non-finite stop, 5 end";

// Writes the header and empty tables of a fresh trace into `f`.
void create_trace(io::H5File& f, const std::string& deck) {
  io::write_hpt_header(f, io::HptFileKind::Trace, deck);
  io::H5Table steps = io::H5Table::create(f.root(), "steps", trace_columns());
  io::H5Table events = io::H5Table::create(f.root(), "events",
                                           {{"step", io::H5Element::Int64},
                                            {"kind", io::H5Element::Int64},
                                            {"value", io::H5Element::Float64}});
  events.group().write_string_attribute("kinds", kEventLegend);
  steps.flush();
  events.flush();
  io::H5Appendable::create(f.root(), "features", io::H5Element::Float64, {std::size_t(kFeatures)});
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
      "step",        "phase",       "loss",       "val_loss", "val_accuracy", "grad_norm",
      "update_norm", "weight_norm", "update_cos", "lr",       "wall_time"};
  return names;
}

TraceFile::TraceFile(std::string path, std::string deck, std::int64_t resume_step)
    : path_(std::move(path)), deck_(std::move(deck)) {
  if (resume_step < 0 || !fs::exists(path_)) {
    io::AtomicH5Writer writer(path_);
    create_trace(writer.file(), deck_);
    writer.commit();
    return;
  }
  io::open_hpt_file(path_, io::HptFileKind::Trace);  // checks kind and version
  edit_atomically(path_, [&](io::H5File& f) {
    io::H5Table steps = io::H5Table::open(f.root(), "steps");
    std::vector<std::int64_t> s(steps.rows());
    if (!s.empty()) f.root().read_dataset("steps/step", io::H5Element::Int64, s.data(), {s.size()});
    std::size_t keep = 0;
    while (keep < s.size() && s[keep] <= resume_step) ++keep;
    steps.truncate(keep);
    steps.flush();
    io::H5Appendable features =
        io::H5Appendable::open(f.root(), "features", io::H5Element::Float64);
    features.resize(std::min(keep, features.rows()));
    // Events past the checkpoint happened in the part of the run that is done again.
    io::H5Table events = io::H5Table::open(f.root(), "events");
    std::vector<std::int64_t> e(events.rows());
    if (!e.empty())
      f.root().read_dataset("events/step", io::H5Element::Int64, e.data(), {e.size()});
    std::size_t keep_events = 0;
    while (keep_events < e.size() && e[keep_events] <= resume_step) ++keep_events;
    events.truncate(keep_events);
    events.flush();
  });
}

void TraceFile::event(std::int64_t step, TraceEvent kind, double value) {
  events_.push_back({step, kind, value});
}

void TraceFile::flush() {
  if (rows_.empty() && events_.empty()) return;
  edit_atomically(path_, [&](io::H5File& f) {
    io::H5Table steps = io::H5Table::open(f.root(), "steps");
    for (const auto& r : rows_)
      steps.append_row({r.step, r.phase, r.loss, r.val_loss, r.val_accuracy, r.grad_norm,
                        r.update_norm, r.weight_norm, r.update_cos, r.lr, r.wall_time});
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
  });
  rows_.clear();
  events_.clear();
}

}  // namespace hpt::train
