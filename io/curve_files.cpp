#include "io/curve_files.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "core/error.hpp"
#include "forecast/curve_densify.hpp"
#include "io/declared_size.hpp"
#include "io/csv_lines.hpp"
#include "io/curve_tidy.hpp"
#include "io/hdf5_file.hpp"

namespace hpt::io {

using forecast::Curve;
using forecast::CurveSet;

namespace {

namespace fs = std::filesystem;

// InputError unless `path` names an existing regular file.
void check_regular_file(const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(path, ec);
  if (ec || !fs::exists(st))
    throw InputError("curve file '" + path + "' (forecast.input) does not exist");
  if (fs::is_directory(st))
    throw InputError("curve file '" + path +
                     "' (forecast.input) is a folder; expected an HDF5 or "
                     "CSV file of loss curves");
  if (!fs::is_regular_file(st))
    throw InputError("curve file '" + path + "' (forecast.input) is not a regular file");
}

// Empty when `v` is an acceptable value of `column`: non-negative, and finite unless the column
// may carry a divergence (loss, grad_norm, val_loss); else why not.
std::string value_problem(const std::string& column, double v, bool may_diverge) {
  if (std::isnan(v) && !may_diverge) return column + " is NaN";
  if (std::isinf(v) && !may_diverge) return column + " is infinite";
  if (v < 0) return column + " is negative (" + std::to_string(v) + ")";
  return "";
}

// Collects the runs of one file: the first problem of a run either throws (strict) or marks the run
// as skipped (skip_bad_runs), so that one file-wide pass reports every skipped run once. The
// reading rules (io/curve_tidy.hpp) apply to every run that was read without a problem.
class RunCollector {
 public:
  RunCollector(std::string path, bool skip) : path_(std::move(path)), skip_(skip) {}

  // `where` locates the problem ("line 7", "dataset '/runs/a/loss' entry 3").
  void fail(const std::string& run, const std::string& where, const std::string& why) {
    const std::string msg = "run '" + run + "': " + where + ": " + why;
    if (!skip_) throw InputError("curve file '" + path_ + "': " + msg);
    if (bad_.emplace(run, msg).second) order_.push_back(run);
  }
  bool is_bad(const std::string& run) const { return bad_.count(run) > 0; }
  void note(const std::string& text) { notes_.push_back(text); }

  CurveSet finish(std::vector<RawCurve> runs) {
    CurveSet set;
    for (auto& raw : runs)
      if (!is_bad(raw.curve.id) && tidy_curve(raw, notes_))
        set.runs.push_back(std::move(raw.curve));
    for (const auto& run : order_) set.skipped.push_back(bad_.at(run));
    set.notes = std::move(notes_);
    if (set.runs.empty() && !order_.empty())
      throw InputError("curve file '" + path_ + "' holds no valid runs (" +
                       std::to_string(order_.size()) +
                       " skipped, the first: " + bad_.at(order_[0]) + ")");
    if (set.runs.empty())
      throw InputError("curve file '" + path_ + "' holds no " +
                       (runs.empty() ? std::string("runs")
                                     : "run with a finite loss (" + set.notes.back() + ")"));
    return set;
  }

 private:
  std::string path_;
  bool skip_;
  std::map<std::string, std::string> bad_;
  std::vector<std::string> order_, notes_;
};

// ---------------------------------------------------------------------------------------- CSV

const char* const kCsvHeader = "run,step,loss[,lr,grad_norm,val_loss,group]";

// Where the known columns are; -1 when absent.
struct CsvColumns {
  int run = -1, step = -1, loss = -1, grad = -1, lr = -1, val = -1, group = -1;
  std::size_t count = 0;
};

// A wide file, as experiment trackers export it: `step`, then one column of losses per run (the
// column's name is the run's id); an empty cell is no value.
bool wide_header(const CsvColumns& c) {
  return c.step >= 0 && c.run < 0 && c.loss < 0 && c.val < 0 && c.count > 1;
}

CsvColumns read_csv_header(const std::string& path, const CsvLine& header, RunCollector& collect) {
  CsvColumns c;
  c.count = header.fields.size();
  std::vector<std::string> ignored;
  for (int i = 0; i < int(header.fields.size()); ++i) {
    const std::string& h = header.fields[std::size_t(i)];
    int* slot = h == "run"         ? &c.run
                : h == "step"      ? &c.step
                : h == "loss"      ? &c.loss
                : h == "grad_norm" ? &c.grad
                : h == "lr"        ? &c.lr
                : h == "val_loss"  ? &c.val
                : h == "group"     ? &c.group
                                   : nullptr;
    if (!slot) {
      ignored.push_back(h.empty() ? "(unnamed)" : "'" + h + "'");
      continue;
    }
    if (*slot >= 0)
      throw InputError("curve file '" + path + "' line 1: column '" + h + "' appears twice");
    *slot = i;
  }
  if (wide_header(c)) return c;  // every other column is a run
  if (c.step < 0 || (c.loss < 0 && c.val < 0))
    throw InputError("curve file '" + path + "' line 1: missing column '" +
                     (c.step < 0 ? "step" : "loss") + "'; expected the header " + kCsvHeader +
                     " (columns in any order; others are ignored), or a wide file: step and one "
                     "column of losses per run");
  if (!ignored.empty()) {
    std::string names;
    for (const auto& n : ignored) names += (names.empty() ? "" : ", ") + n;
    collect.note("columns ignored (not used by forecasts): " + names);
  }
  return c;
}

// Fills the runs of a CSV file row by row.
class CsvRunBuilder {
 public:
  CsvRunBuilder(std::string path, CsvColumns cols, std::string single_run, RunCollector& collect)
      : path_(std::move(path)), cols_(cols), single_(std::move(single_run)), collect_(collect) {}

  void add(const CsvLine& line);
  std::vector<RawCurve> take();

 private:
  const std::string& field(const CsvLine& line, int col) const {
    return line.fields[std::size_t(col)];
  }
  RawCurve& run_of(const std::string& id);
  bool number(const CsvLine& line, int col, const char* name, bool may_diverge, double& v);
  void set_group(RawCurve& r, const CsvLine& line);
  void add_value(const CsvLine& line, int col, const char* name, std::vector<double>& into);

  std::string path_;
  CsvColumns cols_;
  std::string single_;  // the run of a file without a run column
  RunCollector& collect_;
  std::vector<RawCurve> runs_;
  std::map<std::string, std::size_t> index_;
  std::map<std::string, bool> grad_missing_;
  std::string run_, where_;
};

// The runs; a run with an empty gradient norm on some row does not use its gradient norms.
std::vector<RawCurve> CsvRunBuilder::take() {
  for (RawCurve& r : runs_)
    if (grad_missing_.count(r.curve.id) && !r.curve.grad_norm.empty()) {
      collect_.note("run '" + r.curve.id + "': grad_norm is empty on some rows; not used");
      r.curve.grad_norm.clear();
    }
  return std::move(runs_);
}

RawCurve& CsvRunBuilder::run_of(const std::string& id) {
  auto it = index_.find(id);
  if (it == index_.end()) {
    it = index_.emplace(id, runs_.size()).first;
    runs_.emplace_back();
    runs_.back().curve.id = id;
  }
  return runs_[it->second];
}

bool CsvRunBuilder::number(const CsvLine& line, int col, const char* name, bool may_diverge,
                           double& v) {
  if (!parse_real_field(field(line, col), v)) {
    collect_.fail(run_, where_, std::string(name) + " '" + field(line, col) + "' is not a number");
    return false;
  }
  const std::string why = value_problem(name, v, may_diverge);
  if (!why.empty()) collect_.fail(run_, where_, why);
  return why.empty();
}

void CsvRunBuilder::set_group(RawCurve& r, const CsvLine& line) {
  if (cols_.group < 0 || field(line, cols_.group).empty()) return;
  const std::string& g = field(line, cols_.group);
  if (r.curve.group.empty()) r.curve.group = g;
  if (g != r.curve.group)
    collect_.fail(run_, where_,
                  "group '" + g + "' differs from the run's group '" + r.curve.group + "'");
}

// A value of an optional per-step column; lr carries its last value over an empty field, an empty
// gradient norm drops the run's gradient norms.
void CsvRunBuilder::add_value(const CsvLine& line, int col, const char* name,
                              std::vector<double>& into) {
  if (col < 0) return;
  double v = std::numeric_limits<double>::quiet_NaN();
  if (field(line, col).empty()) {
    if (col == cols_.grad) grad_missing_[run_] = true;
    if (col == cols_.lr && !into.empty()) v = into.back();
    if (col == cols_.lr && into.empty()) collect_.fail(run_, where_, "lr is empty");
  } else if (!number(line, col, name, col == cols_.grad, v)) {
    return;
  }
  into.push_back(v);
}

void CsvRunBuilder::add(const CsvLine& line) {
  where_ = "line " + std::to_string(line.number);
  const std::size_t n = line.fields.size();
  run_ = cols_.run < 0 ? single_ : (std::size_t(cols_.run) < n ? field(line, cols_.run) : "");
  if (n != cols_.count || line.quote_open) {
    const std::string why = line.quote_open
                                ? "a quoted field is not closed"
                                : "has " + std::to_string(n) + " columns; the header has " +
                                      std::to_string(cols_.count);
    if (!line.complete) {
      collect_.note(where_ + ", the last line, has no newline and is incomplete (" + why +
                    "): ignored");
    } else if (run_.empty()) {
      throw InputError("curve file '" + path_ + "' " + where_ + ": " + why);
    } else {
      collect_.fail(run_, where_, why);
    }
    return;
  }
  if (run_.empty()) throw InputError("curve file '" + path_ + "' " + where_ + ": empty run id");
  RawCurve& r = run_of(run_);
  if (collect_.is_bad(run_)) return;
  long long step = 0;
  if (!parse_integer_field(field(line, cols_.step), step)) {
    collect_.fail(run_, where_, "step '" + field(line, cols_.step) + "' is not an integer");
    return;
  }
  set_group(r, line);
  double val = 0;
  const bool has_val = cols_.val >= 0 && !field(line, cols_.val).empty();
  if (has_val && !number(line, cols_.val, "val_loss", true, val)) return;
  if (has_val)
    r.curve.val_steps.push_back(step), r.curve.val_loss.push_back(val),
        r.val_where.push_back(where_);
  if (cols_.loss < 0 || field(line, cols_.loss).empty()) {
    if (!has_val) collect_.fail(run_, where_, "loss is empty");
    return;  // a validation-only row
  }
  double loss = 0;
  if (!number(line, cols_.loss, "loss", true, loss)) return;
  add_value(line, cols_.grad, "grad_norm", r.curve.grad_norm);
  add_value(line, cols_.lr, "lr", r.curve.lr);
  r.curve.steps.push_back(step), r.curve.loss.push_back(loss), r.where.push_back(where_);
}

// One run per column of a wide file's header but the step column's (erased after reading), each
// named by its column: a column without a name, or with another's, ends the read.
std::vector<RawCurve> wide_runs_named(const std::string& path, const CsvLine& header,
                                      const CsvColumns& cols) {
  std::vector<RawCurve> runs(header.fields.size());
  for (std::size_t k = 0; k < runs.size(); ++k) {
    runs[k].curve.id = header.fields[k];
    if (header.fields[k].empty())
      throw InputError("curve file '" + path + "' line 1: column " + std::to_string(k + 1) +
                       " has no name; a wide file names each run's column");
    for (std::size_t j = 0; j < k; ++j)
      if (int(j) != cols.step && int(k) != cols.step && header.fields[j] == header.fields[k])
        throw InputError("curve file '" + path + "' line 1: column '" + header.fields[k] +
                         "' appears twice");
  }
  return runs;
}

// Adds one line of a wide file to its runs: a bad line ends the read (it concerns every run), a
// bad cell its run; an incomplete last line is ignored with a note.
void add_wide_line(const std::string& path, const CsvLine& line, const CsvColumns& cols,
                   std::vector<RawCurve>& runs, RunCollector& collect) {
  const std::string where = "line " + std::to_string(line.number);
  if (line.fields.size() != cols.count || line.quote_open) {
    const std::string why = "has " + std::to_string(line.fields.size()) +
                            " columns; the header has " + std::to_string(cols.count);
    if (line.complete) throw InputError("curve file '" + path + "' " + where + ": " + why);
    collect.note(where + ", the last line, has no newline and is incomplete: ignored");
    return;
  }
  long long step = 0;
  const std::string& step_field = line.fields[std::size_t(cols.step)];
  if (!parse_integer_field(step_field, step))
    throw InputError("curve file '" + path + "' " + where + ": step '" + step_field +
                     "' is not an integer");
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::string& cell = line.fields[k];
    RawCurve& r = runs[k];
    if (int(k) == cols.step || cell.empty() || collect.is_bad(r.curve.id)) continue;
    double loss = 0;
    const std::string why = parse_real_field(cell, loss) ? value_problem("loss", loss, true)
                                                         : "loss '" + cell + "' is not a number";
    if (!why.empty()) {
      collect.fail(r.curve.id, where, why);
      continue;
    }
    r.curve.steps.push_back(step), r.curve.loss.push_back(loss), r.where.push_back(where);
  }
}

// The runs of a wide file (header `header`), read line by line from `lines`.
std::vector<RawCurve> read_wide_runs(const std::string& path, const CsvLine& header,
                                     const CsvColumns& cols, CsvLines& lines,
                                     RunCollector& collect) {
  std::vector<RawCurve> runs = wide_runs_named(path, header, cols);
  for (CsvLine line; lines.next(line);) add_wide_line(path, line, cols, runs, collect);
  runs.erase(runs.begin() + cols.step);
  collect.note("wide file: " + std::to_string(runs.size()) + " runs, one per column");
  return runs;
}

}  // namespace

CurveSet read_curves_csv(const std::string& path, bool skip_bad_runs) {
  check_regular_file(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("curve file '" + path + "' cannot be read");
  CsvLines lines(in);
  CsvLine header;
  if (!lines.next(header))
    throw InputError("curve file '" + path + "' is empty; expected the header line " + kCsvHeader);
  RunCollector collect(path, skip_bad_runs);
  const CsvColumns cols = read_csv_header(path, header, collect);
  if (wide_header(cols)) return collect.finish(read_wide_runs(path, header, cols, lines, collect));
  const std::string single = fs::path(path).stem().string();
  if (cols.run < 0) collect.note("no 'run' column: one run, named '" + single + "' after the file");
  CsvRunBuilder builder(path, cols, single, collect);
  for (CsvLine line; lines.next(line);) builder.add(line);
  return collect.finish(builder.take());
}

// ---------------------------------------------------------------------------------------- HDF5

namespace {

// Element types accepted for a series, read as double (step as int64).
std::vector<double> read_series(const H5Group& run, const std::string& name, std::string& problem) {
  const H5Dataset ds = run.open_dataset(name);
  const auto shape = ds.shape();
  if (shape.size() != 1) {
    problem = "must be 1-D, found shape " + shape_string(shape);
    return {};
  }
  const std::size_t length = shape[0];
  const std::string element = ds.element_description();
  // A dataset never written declares entries it does not hold: refused before reading, since
  // HDF5 would fill every one of them (a few bytes can declare 10^8 entries).
  if (length > 0 && ds.stored_bytes() == 0) {
    problem = "declares " + std::to_string(length) + " entries but stores none (never written)";
    return {};
  }
  std::vector<double> v(length);
  if (length == 0) return v;
  if (element == "float64") {
    ds.read(H5Element::Float64, v.data(), shape);
  } else if (element == "float32") {
    std::vector<float> f(length);
    ds.read(H5Element::Float32, f.data(), shape);
    v.assign(f.begin(), f.end());
  } else if (element == "int64") {
    std::vector<std::int64_t> i(length);
    ds.read(H5Element::Int64, i.data(), shape);
    v.assign(i.begin(), i.end());
  } else if (element == "int32") {
    std::vector<int> i(length);
    ds.read(H5Element::Int32, i.data(), shape);
    v.assign(i.begin(), i.end());
  } else {
    problem = "has element type " + element + "; expected float32, float64, int32 or int64";
  }
  return v;
}

// Why entry values of dataset `name` are unacceptable, or "".
std::string series_problem(const std::string& name, const std::vector<double>& v) {
  const bool is_step = name == "step" || name == "val_step";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::string why;
    if (is_step && (!std::isfinite(v[i]) || v[i] != std::floor(v[i]) || std::abs(v[i]) > 9e18))
      why = "step " + std::to_string(v[i]) + " is not an integer";
    else if (!is_step)
      why = value_problem(name, v[i], name != "lr");
    if (!why.empty()) return "entry " + std::to_string(i) + ": " + why;
  }
  return "";
}

const char* const kKnownDatasets[] = {"step", "loss", "grad_norm", "lr", "val_step", "val_loss"};

// Reads one run group; false (with collect.fail called) when it is malformed.
class Hdf5RunReader {
 public:
  Hdf5RunReader(const H5Group& g, const std::string& name, std::string id, RunCollector& collect)
      : g_(g), id_(std::move(id)), base_("/runs/" + name + "/"), collect_(collect) {}

  bool read(RawCurve& raw, std::map<std::string, int>& ignored);

 private:
  bool series(const std::string& name, bool required, std::size_t length,
              std::vector<double>& into);

  const H5Group& g_;
  std::string id_, base_;
  RunCollector& collect_;
};

// Dataset `name` into `into`: required or optional, of `length` entries (0: any length).
bool Hdf5RunReader::series(const std::string& name, bool required, std::size_t length,
                           std::vector<double>& into) {
  if (!g_.has_dataset(name)) {
    if (required) collect_.fail(id_, "dataset '" + base_ + name + "'", "is missing");
    return !required;
  }
  std::string problem;
  into = read_series(g_, name, problem);
  if (problem.empty() && length > 0 && into.size() != length)
    problem = "has " + std::to_string(into.size()) + " entries; '" + base_ + "step' has " +
              std::to_string(length);
  if (problem.empty() && name == "step" && into.empty())
    problem = "is empty (a run needs at least one step)";
  if (problem.empty()) problem = series_problem(name, into);
  if (!problem.empty()) collect_.fail(id_, "dataset '" + base_ + name + "'", problem);
  return problem.empty();
}

bool Hdf5RunReader::read(RawCurve& raw, std::map<std::string, int>& ignored) {
  forecast::Curve& c = raw.curve;
  c.id = id_;
  if (g_.has_attribute("group")) c.group = g_.read_string_attribute("group");
  // `split` only selects runs for pretraining (pretrain.split): one that is not a string is left
  // unread rather than refusing a file that forecasts never need it from.
  if (g_.has_attribute("split")) {
    try {
      c.split = g_.read_string_attribute("split");
    } catch (const InputError&) {  // not a string: left empty
    }
  }
  std::vector<double> steps, val_steps;
  if (!series("step", true, 0, steps) || !series("loss", true, steps.size(), c.loss) ||
      !series("grad_norm", false, steps.size(), c.grad_norm) ||
      !series("lr", false, steps.size(), c.lr))
    return false;
  const bool own_steps = g_.has_dataset("val_step");
  if (!series("val_step", false, 0, val_steps) ||
      !series("val_loss", false, own_steps ? val_steps.size() : steps.size(), c.val_loss))
    return false;
  if (!own_steps) val_steps = steps;  // val_loss beside every step, NaN where none was measured
  if (c.val_loss.empty()) val_steps.clear();
  c.steps.assign(steps.begin(), steps.end());
  c.val_steps.assign(val_steps.begin(), val_steps.end());
  for (std::size_t i = 0; i < c.steps.size(); ++i)
    raw.where.push_back("entry " + std::to_string(i));
  for (std::size_t i = 0; i < c.val_steps.size(); ++i)
    raw.val_where.push_back("validation entry " + std::to_string(i));
  for (const std::string& d : g_.list_datasets())
    if (std::find(std::begin(kKnownDatasets), std::end(kKnownDatasets), d) ==
        std::end(kKnownDatasets))
      ++ignored[d];
  return true;
}

}  // namespace

CurveSet read_curves_hdf5(const std::string& path, bool skip_bad_runs) {
  check_regular_file(path);
  H5File file = H5File::open_read(path);
  if (!file.root().has_group("runs"))
    throw InputError("curve file '" + path +
                     "' has no group '/runs'; expected /runs/<id>/step "
                     "and /runs/<id>/loss");
  const H5Group runs_group = file.root().open_group("runs");
  RunCollector collect(path, skip_bad_runs);
  std::vector<RawCurve> runs;
  std::map<std::string, int> ignored;
  for (const std::string& name : runs_group.list_groups()) {
    const H5Group g = runs_group.open_group(name);
    // The attribute `id` holds a run id that a group name cannot (one with '/').
    const std::string id = g.has_attribute("id") ? g.read_string_attribute("id") : name;
    RawCurve raw;
    if (Hdf5RunReader(g, name, id, collect).read(raw, ignored)) runs.push_back(std::move(raw));
  }
  for (const auto& [d, count] : ignored)
    collect.note("dataset '" + d + "' ignored in " + std::to_string(count) + " run" +
                 (count > 1 ? "s" : "") + " (not used by forecasts)");
  return collect.finish(std::move(runs));
}

CurveSet read_curves(const std::string& path, bool skip_bad_runs) {
  check_regular_file(path);
  char signature[8] = {};
  {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw InputError("curve file '" + path + "' cannot be read");
    in.read(signature, 8);
  }
  static const char hdf5_signature[8] = {'\x89', 'H', 'D', 'F', '\r', '\n', '\x1a', '\n'};
  const bool hdf5 = std::equal(signature, signature + 8, hdf5_signature);
  return naming_file_when_too_large("curve file '" + path + "'", [&] {
    return hdf5 ? read_curves_hdf5(path, skip_bad_runs) : read_curves_csv(path, skip_bad_runs);
  });
}

CurveSet read_curves_step_by_step(const std::string& path, bool skip_bad_runs) {
  CurveSet set = read_curves(path, skip_bad_runs);
  forecast::densify_sparse_runs(set);
  return set;
}

}  // namespace hpt::io
