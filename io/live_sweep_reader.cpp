#include "io/live_sweep_reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>

#include "core/error.hpp"
#include "io/csv_lines.hpp"
#include "io/hdf5_file.hpp"

namespace hpt::io {

using forecast::Curve;
using forecast::LiveRun;

namespace {

namespace fs = std::filesystem;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const char* kTraceSuffix = "_trace.h5";

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A number, NaN for an empty cell; false when the cell is not a number.
bool parse_cell(const std::string& text, double& v) {
  v = kNaN;
  return text.empty() || parse_real_field(text, v);
}

// A step: an integer >= 0.
bool parse_step(const std::string& text, long long& v) {
  return parse_integer_field(text, v) && v >= 0;
}

// A Slurm job id at the end of a file stem after its last '-': "12345" or "12345_7" (%A_%a).
std::string job_from_name(const std::string& stem) {
  const std::size_t dash = stem.rfind('-');
  if (dash == std::string::npos) return "";
  const std::string tail = stem.substr(dash + 1);
  const std::size_t us = tail.find('_');
  const auto digits = [](const std::string& s) {
    return !s.empty() &&
           std::all_of(s.begin(), s.end(), [](char ch) { return ch >= '0' && ch <= '9'; });
  };
  const bool ok = us == std::string::npos
                      ? digits(tail)
                      : digits(tail.substr(0, us)) && digits(tail.substr(us + 1));
  return ok ? tail : "";
}

// Cuts `c` before step `t` (the run restarted from a checkpoint at or before it).
void cut_before(Curve& c, long long t) {
  const std::size_t n =
      std::size_t(std::lower_bound(c.steps.begin(), c.steps.end(), t) - c.steps.begin());
  c.steps.resize(n);
  c.loss.resize(n);
  if (c.lr.size() > n) c.lr.resize(n);
  const std::size_t v = std::size_t(std::lower_bound(c.val_steps.begin(), c.val_steps.end(), t) -
                                    c.val_steps.begin());
  c.val_steps.resize(v);
  c.val_loss.resize(v);
}

// The learning rate of a new entry: the row's, else the run's previous one; the run has no
// learning rates once one is missing at its start.
void append_lr(Curve& c, double lr, std::size_t entries_before) {
  if (c.lr.size() != entries_before) return;  // no lr column from the start
  if (std::isnan(lr) && c.lr.empty()) return;
  c.lr.push_back(std::isnan(lr) ? c.lr.back() : lr);
}

}  // namespace

bool append_live_row(LiveRun& run, const LiveRow& row, const std::string& where,
                     std::vector<std::string>& notes) {
  Curve& c = run.curve;
  const bool has_loss = row.has_loss;
  const long long newest = std::max(c.steps.empty() ? -1 : c.steps.back(), run.ended_at);
  if (has_loss && newest >= 0 && row.step <= newest) {
    notes.push_back("run '" + c.id + "': " + where + " logs step " + std::to_string(row.step) +
                    " after step " + std::to_string(newest) +
                    ": it restarted from a checkpoint; its curve is cut before that step");
    cut_before(c, row.step);
    run.ended = false;
    run.ended_at = -1;
  }
  if (run.ended) return false;
  if (has_loss && (!std::isfinite(row.loss) || row.loss < 0)) {
    const bool negative = row.loss < 0;
    notes.push_back(
        "run '" + c.id + "': " + where + ": loss " + std::to_string(row.loss) +
        (negative ? " is negative; row skipped" : " is not finite: its curve ends before it"));
    if (!negative) run.ended = true, run.ended_at = row.step;
    return false;
  }
  bool changed = false;
  if (has_loss) {
    const std::size_t before = c.steps.size();
    c.steps.push_back(row.step);
    c.loss.push_back(row.loss);
    append_lr(c, row.lr, before);
    changed = true;
  }
  if (std::isfinite(row.val_loss) && row.val_loss >= 0 &&
      (c.val_steps.empty() || row.step > c.val_steps.back())) {
    c.val_steps.push_back(row.step);
    c.val_loss.push_back(row.val_loss);
    changed = true;
  }
  return changed;
}

struct LiveSweepReader::CsvSource {
  explicit CsvSource(const std::string& path) : file(path) {}
  GrowingFile file;
  bool header = false, wide = false;
  int step = -1, loss = -1, lr = -1, val = -1, group = -1, job = -1, final_step = -1;
  int run = -1;                 // one run per file: its index
  std::vector<int> column_run;  // wide: the run of every column (-1: the step column)
};

struct LiveSweepReader::TraceSource {
  std::string path;
  int run = -1;
  long long size = -1, mtime_ns = -1;
  // Whether `st` differs from what was read last (size, or modification time to the nanosecond:
  // a file rewritten within one second at the same size is still seen).
  bool changed(const struct stat& st) const {
    return (long long)st.st_size != size || modified_ns(st) != mtime_ns;
  }
  void remember(const struct stat& st) { size = (long long)st.st_size, mtime_ns = modified_ns(st); }
  static long long modified_ns(const struct stat& st) {
    return (long long)st.st_mtim.tv_sec * 1000000000LL + (long long)st.st_mtim.tv_nsec;
  }
};

LiveSweepReader::LiveSweepReader(std::string folder) : folder_(std::move(folder)) {}
LiveSweepReader::~LiveSweepReader() = default;

int LiveSweepReader::run_index(const std::string& id, const std::string& file) {
  for (std::size_t r = 0; r < runs_.size(); ++r)
    if (runs_[r].curve.id == id && runs_[r].file == file) return int(r);
  LiveRun run;
  run.curve.id = id;
  run.file = file;
  runs_.push_back(run);
  return int(runs_.size()) - 1;
}

std::vector<std::string> LiveSweepReader::poll(double now) {
  std::vector<std::string> notes;
  grew_ = false;
  scan(notes);
  for (auto& [path, src] : csv_) read_csv(*src, now, notes);
  for (auto& [path, src] : traces_) read_trace(*src, now, notes);
  for (auto& [path, src] : plan_files_) read_plan(*src, notes);
  attach_plans();
  return notes;
}

// New files of the folder become sources, in name order.
void LiveSweepReader::scan(std::vector<std::string>& notes) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder_, ec))
    if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
  if (ec) notes.push_back("folder '" + folder_ + "' could not be listed: " + ec.message());
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    const std::string path = folder_ + "/" + name;
    if (ends_with(name, ".csv") && !csv_.count(path))
      csv_.emplace(path, std::make_unique<CsvSource>(path));
    else if (ends_with(name, ".lr") && !plan_files_.count(path)) {
      auto src = std::make_unique<TraceSource>();
      src->path = path;
      plan_files_.emplace(path, std::move(src));
    } else if (ends_with(name, kTraceSuffix) && !traces_.count(path)) {
      auto src = std::make_unique<TraceSource>();
      src->path = path;
      src->run = run_index(name.substr(0, name.size() - std::string(kTraceSuffix).size()), path);
      traces_.emplace(path, std::move(src));
    }
  }
}

void LiveSweepReader::mark_gone(const std::string& file, std::vector<std::string>& notes) {
  for (LiveRun& run : runs_)
    if (run.file == file && !run.gone) {
      run.gone = true;
      notes.push_back("run '" + run.curve.id + "': its file '" + file + "' vanished");
    }
}

void LiveSweepReader::read_csv(CsvSource& src, double now, std::vector<std::string>& notes) {
  GrowingFile::Update u = src.file.read();
  const std::string& path = src.file.path();
  if (u.change == GrowingFile::Change::kGone) return mark_gone(path, notes);
  if (u.change == GrowingFile::Change::kRestarted) {
    notes.push_back("file '" + path + "' was replaced or shrank: read again from its start");
    src.header = false;
  }
  for (LiveRun& run : runs_)
    if (run.file == path && run.gone && u.change != GrowingFile::Change::kNone) run.gone = false;
  for (std::size_t i = 0; i < u.lines.size(); ++i) {
    const std::string& line = u.lines[i];
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    if (!src.header)
      read_header(src, line, notes);
    else
      read_row(src, line, u.first_line + long(i), now, notes);
  }
}

// The header names the layout: `step` and `loss` (one run per file) or `step` and run columns.
void LiveSweepReader::read_header(CsvSource& src, const std::string& line,
                                  std::vector<std::string>& notes) {
  bool quote_open = false;
  const std::vector<std::string> fields = split_csv_fields(line, quote_open);
  const std::string& path = src.file.path();
  src.header = true;
  const auto col = [&](const char* name) {
    const auto it = std::find(fields.begin(), fields.end(), name);
    return it == fields.end() ? -1 : int(it - fields.begin());
  };
  src.step = col("step"), src.loss = col("loss"), src.lr = col("lr"), src.val = col("val_loss");
  src.group = col("group"), src.job = col("job"), src.final_step = col("final_step");
  if (src.step < 0) {
    notes.push_back("file '" + path + "' has no `step` column in its header (" + line +
                    "): not read");
    return;
  }
  src.wide = src.loss < 0;
  const std::string stem = fs::path(path).stem().string();
  if (!src.wide) {
    src.run = run_index(stem, path);
    runs_[std::size_t(src.run)].job = job_from_name(stem);
    notes.push_back("run '" + stem + "': reading '" + path + "'");
    return;
  }
  src.column_run.assign(fields.size(), -1);
  for (std::size_t k = 0; k < fields.size(); ++k)
    if (int(k) != src.step) src.column_run[k] = run_index(fields[k], path);
  notes.push_back("wide file '" + path + "': " + std::to_string(fields.size() - 1) +
                  " runs, one per column");
}

void LiveSweepReader::read_row(CsvSource& src, const std::string& line, long number, double now,
                               std::vector<std::string>& notes) {
  if (src.step < 0) return;
  bool quote_open = false;
  const std::vector<std::string> f = split_csv_fields(line, quote_open);
  const std::string where = "'" + src.file.path() + "' line " + std::to_string(number);
  const auto cell = [&](int k) { return k >= 0 && k < int(f.size()) ? f[std::size_t(k)] : ""; };
  LiveRow row;
  if (!parse_step(cell(src.step), row.step)) {
    notes.push_back(where + ": step '" + cell(src.step) + "' is not a step number; line skipped");
    return;
  }
  const auto add = [&](int r, int loss_col, int lr_col, int val_col) {
    LiveRun& run = runs_[std::size_t(r)];
    row.has_loss = !cell(loss_col).empty();
    if (!parse_cell(cell(loss_col), row.loss) || !parse_cell(cell(lr_col), row.lr) ||
        !parse_cell(cell(val_col), row.val_loss)) {
      notes.push_back(where + ": run '" + run.curve.id +
                      "' has a cell that is not a number; skipped");
      return;
    }
    if (append_live_row(run, row, where, notes)) run.grown_at = now, grew_ = true;
  };
  if (!src.wide) {
    LiveRun& run = runs_[std::size_t(src.run)];
    if (run.curve.steps.empty() && src.group >= 0) run.curve.group = cell(src.group);
    if (src.job >= 0 && !cell(src.job).empty()) run.job = cell(src.job);
    long long planned = 0;
    if (src.final_step >= 0 && parse_step(cell(src.final_step), planned)) run.planned_end = planned;
    add(src.run, src.loss, src.lr, src.val);
    return;
  }
  for (std::size_t k = 0; k < src.column_run.size(); ++k)
    if (src.column_run[k] >= 0) add(src.column_run[k], int(k), -1, -1);
}

// A trace is replaced whole: read again whenever its size or time changed.
void LiveSweepReader::read_trace(TraceSource& src, double now, std::vector<std::string>& notes) {
  struct stat st {};
  if (::stat(src.path.c_str(), &st) != 0) return mark_gone(src.path, notes);
  runs_[std::size_t(src.run)].gone = false;
  if (!src.changed(st)) return;
  std::vector<std::int64_t> steps;
  std::vector<double> loss, lr, val;
  try {
    const H5File file = H5File::open_read(src.path);
    const H5Group t = file.root().open_group("steps");
    const std::size_t n = t.open_dataset("step").shape().at(0);
    steps.resize(n), loss.resize(n), lr.resize(n), val.resize(n);
    t.read_dataset("step", H5Element::Int64, steps.data(), {n});
    t.read_dataset("loss", H5Element::Float64, loss.data(), {n});
    t.read_dataset("lr", H5Element::Float64, lr.data(), {n});
    t.read_dataset("val_loss", H5Element::Float64, val.data(), {n});
  } catch (const std::exception& e) {
    notes.push_back("trace '" + src.path + "' could not be read (" + e.what() +
                    "); tried again at the next poll");
    return;
  }
  src.remember(st);
  LiveRun& run = runs_[std::size_t(src.run)];
  const std::size_t before = run.curve.steps.size();
  run.curve.steps.clear(), run.curve.loss.clear(), run.curve.lr.clear();
  run.curve.val_steps.clear(), run.curve.val_loss.clear();
  run.ended = false, run.ended_at = -1;
  std::vector<std::string> quiet;  // a trace's steps never go back: nothing to note but the end
  for (std::size_t i = 0; i < steps.size(); ++i) {
    // val_loss is carried forward between validations: a new value is a new validation point.
    const bool new_val = std::isfinite(val[i]) && (i == 0 || val[i] != val[i - 1]);
    append_live_row(run, {steps[i], true, loss[i], lr[i], new_val ? val[i] : kNaN},
                    "'" + src.path + "' row " + std::to_string(i), run.ended ? quiet : notes);
  }
  if (run.curve.steps.size() != before) run.grown_at = now, grew_ = true;
}

// A plan is read whole whenever its size or time changed; rows that do not parse, or whose steps
// do not increase, make the plan unusable (a note; the run is forecast without it).
void LiveSweepReader::read_plan(TraceSource& src, std::vector<std::string>& notes) {
  struct stat st {};
  if (::stat(src.path.c_str(), &st) != 0 || !src.changed(st)) return;
  src.remember(st);
  plans_changed_ = true;
  const std::string id = fs::path(src.path).stem().string();
  Plan plan;
  std::ifstream in(src.path);
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    bool quote_open = false;
    const std::vector<std::string> f = split_csv_fields(line, quote_open);
    long long step = 0;
    double lr = 0;
    if (f.empty() || (number == 1 && f[0] == "step")) continue;
    if (f.size() < 2 || !parse_step(f[0], step) || !parse_cell(f[1], lr) || !(lr >= 0) ||
        (!plan.steps.empty() && step <= plan.steps.back())) {
      notes.push_back("plan '" + src.path + "' line " + std::to_string(number) + " ('" + line +
                      "') is not `step,lr` with increasing steps: run '" + id +
                      "' is forecast without its plan");
      plans_.erase(id);
      return;
    }
    plan.steps.push_back(step), plan.lr.push_back(lr);
  }
  notes.push_back("run '" + id + "': planned learning rates of " +
                  std::to_string(plan.steps.size()) + " steps from '" + src.path + "'");
  plans_[id] = std::move(plan);
}

// Copies each run's plan into it, only when a plan was read or a run appeared since the last time.
void LiveSweepReader::attach_plans() {
  if (!plans_changed_ && runs_.size() == runs_with_plans_) return;
  plans_changed_ = false, runs_with_plans_ = runs_.size();
  for (LiveRun& run : runs_) {
    const auto it = plans_.find(run.curve.id);
    if (it == plans_.end()) {
      run.plan_steps.clear(), run.plan_lr.clear();
      continue;
    }
    run.plan_steps = it->second.steps;
    run.plan_lr = it->second.lr;
  }
}

}  // namespace hpt::io
