#include "io/watch_status_file.hpp"

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "io/atomic_file.hpp"
#include "io/console.hpp"
#include "io/hdf5_format.hpp"

namespace hpt::io {

using forecast::RunStatus;

namespace {

// A run's curve in the status file: every k-th row, at most this many (and the newest), to draw.
constexpr std::size_t kCurvePoints = 512;

void write_names(H5Group& g, const forecast::LiveRun& run, const RunStatus& st) {
  g.write_string_attribute("id", run.curve.id);
  g.write_string_attribute("group", run.curve.group);
  g.write_string_attribute("file", run.file);
  g.write_string_attribute("job", run.job);
  g.write_string_attribute("decision", forecast::decision_name(st.decision));
  g.write_string_attribute("reason", st.reason);
  g.write_string_attribute("best_other_run", st.best_other_run);
}

void write_column(H5Group& g, const std::string& name, const std::vector<std::int64_t>& v) {
  g.write_dataset(name, H5Element::Int64, v.data(), {v.size()});
}
void write_column(H5Group& g, const std::string& name, const std::vector<double>& v) {
  g.write_dataset(name, H5Element::Float64, v.data(), {v.size()});
}

// /status: one entry per run (index i of /runs/<i>) for every number of its status.
void write_status_columns(H5Group& root, const std::vector<RunStatus>& status) {
  H5Group g = root.create_group("status");
  const auto ints = [&](const char* name, auto get) {
    std::vector<std::int64_t> v;
    for (const RunStatus& st : status) v.push_back(get(st));
    write_column(g, name, v);
  };
  const auto reals = [&](const char* name, auto get) {
    std::vector<double> v;
    for (const RunStatus& st : status) v.push_back(get(st));
    write_column(g, name, v);
  };
  ints("last_step", [](const RunStatus& s) { return s.last_step; });
  ints("judge_step", [](const RunStatus& s) { return s.judge_step; });
  ints("stop_step", [](const RunStatus& s) { return s.stop_step; });
  ints("verdict", [](const RunStatus& s) { return (long long)s.verdict; });
  reals("level", [](const RunStatus& s) { return s.level; });
  reals("final_q05", [](const RunStatus& s) { return s.final_q05; });
  reals("final_q50", [](const RunStatus& s) { return s.final_q50; });
  reals("final_q95", [](const RunStatus& s) { return s.final_q95; });
  reals("beat_probability", [](const RunStatus& s) { return s.beat_probability; });
  reals("best_other", [](const RunStatus& s) { return s.best_other; });
  reals("judged_probability", [](const RunStatus& s) { return s.judged_probability; });
}

// /curves: every run's curve, thinned, one after the other (run i: entries offset[i] to
// offset[i + 1]); /fans likewise for the forecasts to the last step.
void write_curves(H5Group& root, const std::vector<forecast::LiveRun>& runs,
                  const std::vector<RunStatus>& status) {
  std::vector<std::int64_t> offset{0}, steps, fan_offset{0}, fan_steps;
  std::vector<double> loss, q05, q50, q95;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const forecast::Curve& c = runs[r].curve;
    const std::size_t stride = (c.steps.size() + kCurvePoints - 1) / kCurvePoints;
    for (std::size_t i = 0; i < c.steps.size(); i += stride)
      steps.push_back(c.steps[i]), loss.push_back(c.loss[i]);
    if (!c.steps.empty() && steps.back() != c.steps.back())
      steps.push_back(c.steps.back()), loss.push_back(c.loss.back());
    offset.push_back(std::int64_t(steps.size()));
    const RunStatus& st = status[r];
    fan_steps.insert(fan_steps.end(), st.fan_step.begin(), st.fan_step.end());
    q05.insert(q05.end(), st.fan_q05.begin(), st.fan_q05.end());
    q50.insert(q50.end(), st.fan_q50.begin(), st.fan_q50.end());
    q95.insert(q95.end(), st.fan_q95.begin(), st.fan_q95.end());
    fan_offset.push_back(std::int64_t(fan_steps.size()));
  }
  H5Group g = root.create_group("curves");
  write_column(g, "offset", offset);
  write_column(g, "step", steps);
  write_column(g, "loss", loss);
  H5Group f = root.create_group("fans");
  write_column(f, "offset", fan_offset);
  write_column(f, "step", fan_steps);
  write_column(f, "q05", q05);
  write_column(f, "q50", q50);
  write_column(f, "q95", q95);
}

std::string loss_text(double log_loss) {
  return std::isnan(log_loss) ? "-" : fmt(std::exp(log_loss));
}

}  // namespace

void write_watch_status(const std::string& path, const std::string& deck_text,
                        const WatchPoll& poll, const forecast::LiveJudgeSettings& settings,
                        const std::vector<forecast::LiveRun>& runs,
                        const std::vector<RunStatus>& status) {
  AtomicH5Writer out(path);
  write_hpt_header(out.file(), HptFileKind::Watch, deck_text);
  H5Group root = out.file().root();
  root.write_int_attribute("poll", poll.poll);
  root.write_double_attribute("seconds", poll.seconds);
  root.write_string_attribute("folder", poll.folder);
  root.write_int_attribute("final_step", settings.final_step);
  root.write_double_attribute("stop_at", settings.stop_at);
  root.write_vector_attribute("rungs", settings.rungs);
  root.write_double_attribute("stop_confidence", settings.stop_confidence);
  root.write_int_attribute("runs", (long long)runs.size());
  root.write_int_attribute("stopped", poll.stopped);
  for (std::size_t r = 0; r < runs.size(); ++r) {
    H5Group g = root.create_group("runs/" + std::to_string(r));
    write_names(g, runs[r], status[r]);
  }
  write_status_columns(root, status);
  write_curves(root, runs, status);
  out.commit();
  write_text_file_atomically(path.substr(0, path.size() - 3) + ".txt",
                             watch_status_text(poll, runs, status));
}

std::string watch_status_text(const WatchPoll& poll, const std::vector<forecast::LiveRun>& runs,
                              const std::vector<RunStatus>& status) {
  TextTable table({"run", "group", "step", "final loss [90 %]", "P(beat best)", "decision"});
  std::ostringstream reasons;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const RunStatus& st = status[r];
    table.add_row({runs[r].curve.id, runs[r].curve.group, std::to_string(st.last_step),
                   loss_text(st.final_q50) + " [" + loss_text(st.final_q05) + ", " +
                       loss_text(st.final_q95) + "]",
                   std::isnan(st.beat_probability) ? "-" : fmt(st.beat_probability),
                   forecast::decision_name(st.decision)});
    reasons << "  '" << runs[r].curve.id << "': " << st.reason << "\n";
  }
  std::ostringstream out;
  out << "hpt watch of '" << poll.folder << "', poll " << poll.poll << " at " << std::fixed
      << std::setprecision(1) << poll.seconds << std::defaultfloat << " s: " << runs.size()
      << " runs, " << poll.stopped << " stopped\n"
      << table.str() << "why:\n"
      << reasons.str();
  return out.str();
}

std::vector<StoppedRun> read_stopped_runs(const std::string& path) {
  std::vector<StoppedRun> out;
  if (!std::filesystem::exists(path)) return out;
  const H5File file = H5File::open_read(path);
  const H5Group root = file.root();
  if (!root.has_group("runs")) return out;
  const H5Group runs = root.open_group("runs");
  const H5Dataset stop_step = root.open_dataset_checked("status/stop_step", H5Element::Int64, 1);
  std::vector<std::int64_t> steps(stop_step.shape().at(0));
  stop_step.read(H5Element::Int64, steps.data(), {steps.size()});
  for (const std::string& name : runs.list_groups()) {
    const H5Group g = runs.open_group(name);
    const std::size_t i = std::size_t(std::stoll(name));
    if (g.read_string_attribute("decision") == "stop" && i < steps.size())
      out.push_back({g.read_string_attribute("id"), g.read_string_attribute("reason"), steps[i]});
  }
  return out;
}

}  // namespace hpt::io
