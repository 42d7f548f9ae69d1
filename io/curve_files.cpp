#include "io/curve_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "core/error.hpp"
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

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto comma = line.find(',', start);
    out.push_back(
        trim(line.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool parse_double(const std::string& text, double& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && errno != ERANGE;
}

bool parse_step(const std::string& text, long long& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return end == text.c_str() + text.size() && errno != ERANGE;
}

// Empty string when `v` is an acceptable value of `column`, else why not.
std::string value_problem(const std::string& column, double v) {
  if (std::isnan(v)) return column + " is NaN";
  if (std::isinf(v)) return column + " is infinite";
  if (v < 0) return column + " is negative (" + std::to_string(v) + ")";
  return "";
}

// Collects the runs of one file: the first problem of a run either throws (strict) or marks the run
// as skipped (skip_bad_runs), so that one file-wide pass reports every skipped run once.
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

  CurveSet finish(std::vector<Curve> runs) const {
    CurveSet set;
    for (auto& c : runs)
      if (!is_bad(c.id)) set.runs.push_back(std::move(c));
    for (const auto& run : order_) set.skipped.push_back(bad_.at(run));
    if (set.runs.empty())
      throw InputError("curve file '" + path_ + "' holds no " +
                       (order_.empty() ? std::string("runs")
                                       : "valid runs (" + std::to_string(order_.size()) +
                                             " skipped, the first: " + bad_.at(order_[0]) + ")"));
    return set;
  }

 private:
  std::string path_;
  bool skip_;
  std::map<std::string, std::string> bad_;
  std::vector<std::string> order_;
};

// Element types accepted for a series, read as double (step as int64).
std::vector<double> read_series(const H5Group& run, const std::string& name, std::size_t& length,
                                std::string& problem) {
  const H5Dataset ds = run.open_dataset(name);
  const auto shape = ds.shape();
  if (shape.size() != 1) {
    problem = "must be 1-D, found shape " + shape_string(shape);
    return {};
  }
  length = shape[0];
  const std::string element = ds.element_description();
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

}  // namespace

CurveSet read_curves_csv(const std::string& path, bool skip_bad_runs) {
  check_regular_file(path);
  std::ifstream in(path);
  if (!in) throw InputError("curve file '" + path + "' cannot be read");
  std::string line;
  if (!std::getline(in, line))
    throw InputError("curve file '" + path +
                     "' is empty; expected the header line "
                     "run,step,loss[,grad_norm,lr]");
  if (line.size() >= 3 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);
  const auto header = split_csv(line);
  int col_run = -1, col_step = -1, col_loss = -1, col_grad = -1, col_lr = -1;
  for (int i = 0; i < int(header.size()); ++i) {
    const std::string& h = header[std::size_t(i)];
    int* slot = h == "run"         ? &col_run
                : h == "step"      ? &col_step
                : h == "loss"      ? &col_loss
                : h == "grad_norm" ? &col_grad
                : h == "lr"        ? &col_lr
                                   : nullptr;
    if (!slot)
      throw InputError("curve file '" + path + "' line 1: unknown column '" + h +
                       "'; expected the header run,step,loss[,grad_norm,lr]");
    if (*slot >= 0)
      throw InputError("curve file '" + path + "' line 1: column '" + h + "' appears twice");
    *slot = i;
  }
  const std::pair<const char*, int> required[] = {
      {"run", col_run}, {"step", col_step}, {"loss", col_loss}};
  for (const auto& [name, col] : required)
    if (col < 0)
      throw InputError("curve file '" + path + "' line 1: missing column '" + name +
                       "'; expected the header run,step,loss[,grad_norm,lr]");

  RunCollector collect(path, skip_bad_runs);
  std::vector<Curve> runs;
  std::map<std::string, std::size_t> index;
  std::map<std::string, long> last_line;
  long line_no = 1;
  while (std::getline(in, line)) {
    ++line_no;
    if (trim(line).empty()) continue;
    const auto f = split_csv(line);
    const std::string where = "line " + std::to_string(line_no);
    if (f.size() != header.size()) {
      const std::string run = f.empty() ? "" : f[std::size_t(col_run)];
      const std::string why = "has " + std::to_string(f.size()) + " columns; the header has " +
                              std::to_string(header.size());
      if (run.empty() || f.size() <= std::size_t(col_run))
        throw InputError("curve file '" + path + "' " + where + ": " + why);
      collect.fail(run, where, why);
      continue;
    }
    const std::string run = f[std::size_t(col_run)];
    if (run.empty()) throw InputError("curve file '" + path + "' " + where + ": empty run id");
    auto it = index.find(run);
    if (it == index.end()) {
      it = index.emplace(run, runs.size()).first;
      runs.push_back(Curve{run, {}, {}, {}, {}, {}});
    }
    Curve& c = runs[it->second];
    if (collect.is_bad(run)) continue;
    long long step = 0;
    if (!parse_step(f[std::size_t(col_step)], step)) {
      collect.fail(run, where, "step '" + f[std::size_t(col_step)] + "' is not an integer");
      continue;
    }
    if (!c.steps.empty() && step <= c.steps.back()) {
      collect.fail(run, where,
                   "step " + std::to_string(step) +
                       (step == c.steps.back() ? " repeats" : " is smaller than") + " step " +
                       std::to_string(c.steps.back()) + " of line " +
                       std::to_string(last_line[run]) + "; steps of a run must increase");
      continue;
    }
    auto number = [&](int col, const char* name, std::vector<double>& into) {
      if (col < 0) return true;
      double v = 0;
      if (!parse_double(f[std::size_t(col)], v)) {
        collect.fail(run, where,
                     std::string(name) + " '" + f[std::size_t(col)] + "' is not a number");
        return false;
      }
      const std::string why = value_problem(name, v);
      if (!why.empty()) {
        collect.fail(run, where, why);
        return false;
      }
      into.push_back(v);
      return true;
    };
    if (!number(col_loss, "loss", c.loss) || !number(col_grad, "grad_norm", c.grad_norm) ||
        !number(col_lr, "lr", c.lr))
      continue;
    c.steps.push_back(step);
    last_line[run] = line_no;
  }
  return collect.finish(std::move(runs));
}

CurveSet read_curves_hdf5(const std::string& path, bool skip_bad_runs) {
  check_regular_file(path);
  H5File file = H5File::open_read(path);
  if (!file.root().has_group("runs"))
    throw InputError("curve file '" + path +
                     "' has no group '/runs'; expected /runs/<id>/step "
                     "and /runs/<id>/loss");
  const H5Group runs_group = file.root().open_group("runs");
  RunCollector collect(path, skip_bad_runs);
  std::vector<Curve> runs;
  for (const std::string& id : runs_group.list_groups()) {
    const H5Group g = runs_group.open_group(id);
    const std::string base = "/runs/" + id + "/";
    Curve c{id, {}, {}, {}, {}, {}};
    bool ok = true;
    std::size_t length = 0;
    auto read = [&](const std::string& name, bool required, std::vector<double>& into) {
      if (!ok) return;
      if (!g.has_dataset(name)) {
        if (required) {
          collect.fail(id, "dataset '" + base + name + "'", "is missing");
          ok = false;
        }
        return;
      }
      std::size_t n = 0;
      std::string problem;
      into = read_series(g, name, n, problem);
      if (problem.empty() && name != "step" && n != length)
        problem = "has " + std::to_string(n) + " entries; '" + base + "step' has " +
                  std::to_string(length);
      if (problem.empty() && name == "step") length = n;
      if (problem.empty() && n == 0) problem = "is empty (a run needs at least one step)";
      for (std::size_t i = 0; problem.empty() && i < into.size(); ++i) {
        std::string why = name == "step" ? (std::isfinite(into[i]) ? "" : "step is not finite")
                          : (name == "val_loss" && std::isnan(into[i]))
                              ? ""  // no validation at this step
                              : value_problem(name, into[i]);
        if (why.empty() && name == "step" && i > 0 && into[i] <= into[i - 1])
          why = "step " + std::to_string((long long)into[i]) +
                (into[i] == into[i - 1] ? " repeats" : " is smaller than") +
                " the step before it (" + std::to_string((long long)into[i - 1]) +
                "); steps of a run must increase";
        if (!why.empty()) problem = "entry " + std::to_string(i) + ": " + why;
      }
      if (!problem.empty()) {
        collect.fail(id, "dataset '" + base + name + "'", problem);
        ok = false;
      }
    };
    std::vector<double> steps;
    read("step", true, steps);
    read("loss", true, c.loss);
    read("grad_norm", false, c.grad_norm);
    read("lr", false, c.lr);
    read("val_loss", false, c.val_loss);
    if (!ok) continue;
    c.steps.assign(steps.begin(), steps.end());
    runs.push_back(std::move(c));
  }
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
  if (std::equal(signature, signature + 8, hdf5_signature))
    return read_curves_hdf5(path, skip_bad_runs);
  return read_curves_csv(path, skip_bad_runs);
}

}  // namespace hpt::io
