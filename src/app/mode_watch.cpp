#include "app/mode_watch.hpp"

#include <Kokkos_Core.hpp>
#include <chrono>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <thread>

#include "app/output_location.hpp"
#include "app/watch_actions.hpp"
#include "app/watch_options.hpp"
#include "core/error.hpp"
#include "app/stop_rule_words.hpp"
#include "forecast/pretrain_options.hpp"
#include "io/console.hpp"
#include "io/level_model_file.hpp"
#include "io/live_sweep_reader.hpp"
#include "io/watch_status_file.hpp"
#include "train/stop_signal.hpp"

namespace hpt::app {

namespace {

namespace fs = std::filesystem;
using forecast::Decision;

std::string status_path(const RunContext& ctx) {
  return ctx.output_path("_watch.h5");
}

void check_folder(const std::string& folder) {
  if (folder.empty())
    throw InputError(
        "watch.folder is empty; expected the folder the sweep's runs write their "
        "curve files to");
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw InputError("watch.folder = '" + folder +
                     "' is not a folder; expected the folder the "
                     "sweep's runs write their curve files to");
}

// The judge with forecast.pretrained (required: the stop rule forecasts final levels). The watch
// judges with the pretrained weights only: it refuses forecast.finetune = on rather than decide
// otherwise than run.mode = forecast would.
forecast::LiveJudgeSettings judge_settings(const Config& c) {
  if (c.get_string("forecast.finetune") == "on")
    throw InputError(
        "forecast.finetune = on: run.mode = watch judges with the pretrained level forecaster "
        "only (online fine-tuning is a run.mode = forecast option for now); expected "
        "forecast.finetune = off");
  forecast::LiveJudgeSettings s = read_live_judge_settings(c);
  const std::string path = forecast::pretrained_model_path(c);
  if (path.empty())
    throw InputError(
        "forecast.pretrained = none: run.mode = watch forecasts every run's final "
        "loss with the learned level forecaster; expected 'default' or a model file");
  s.model = io::load_level_model(path, "forecast.pretrained");
  const std::string final_path = forecast::final_model_path(c);
  if (!final_path.empty())
    s.final_model = io::load_level_model(final_path, "forecast.final_model",
                                         forecast::LevelModel::Target::kEnd);
  return s;
}

// Why the watch ends after this poll ("" to go on).
std::string end_reason(const Config& c, long long poll, double idle,
                       const std::vector<forecast::RunStatus>& status) {
  if (train::stop_signal_received())
    return "signal " + std::to_string(train::stop_signal_received());
  if (c.get_int("watch.max_polls") > 0 && poll >= c.get_int("watch.max_polls"))
    return "watch.max_polls reached";
  bool all_done = !status.empty();
  for (const forecast::RunStatus& st : status)
    all_done = all_done && st.decision != Decision::kWait && st.decision != Decision::kContinue;
  if (all_done) return "every run finished, stopped or vanished";
  if (c.get_real("watch.idle_exit") > 0 && idle >= c.get_real("watch.idle_exit"))
    return "no file gained a row for watch.idle_exit seconds";
  return "";
}

// Sleeps `seconds` in short slices, returning early on a stop signal.
void sleep_interval(double seconds) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < until && !train::stop_signal_received())
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

long long count_stopped(const std::vector<forecast::RunStatus>& status) {
  long long n = 0;
  for (const auto& st : status) n += st.decision == Decision::kStop;
  return n;
}

std::string seconds_text(double s) {
  std::ostringstream out;
  out << std::fixed << std::setprecision(1) << s;
  return out.str();
}

// Where one poll's time went.
struct PollTimes {
  double read = 0, judge = 0, write = 0;
};

void print_poll(const io::WatchPoll& p, const std::vector<forecast::RunStatus>& status,
                const PollTimes& t) {
  long long live = 0, newest = -1;
  for (const auto& st : status) {
    live += st.decision == Decision::kWait || st.decision == Decision::kContinue;
    newest = std::max(newest, st.last_step);
  }
  std::cout << "poll " << p.poll << " at " << seconds_text(p.seconds) << " s: " << status.size()
            << " runs (" << live << " live, " << p.stopped << " stopped), newest step " << newest
            << "; poll took " << io::fmt(t.read + t.judge + t.write, 3) << " s (read "
            << io::fmt(t.read, 3) << ", forecasts and judgments " << io::fmt(t.judge, 3)
            << ", status files " << io::fmt(t.write, 3) << ")" << std::endl;
}

// A stop decided by an earlier watch of the same sweep stays (its status file is read back).
void restore_earlier_stops(const RunContext& ctx, forecast::LiveJudge& judge) {
  for (const io::StoppedRun& s : io::read_stopped_runs(status_path(ctx))) {
    judge.restore_stop(s.id, s.step, s.reason);
    std::cout << "run '" << s.id << "' stays stopped (by an earlier watch at step " << s.step
              << ")\n";
  }
}

void print_start(const Config& c, const forecast::LiveJudgeSettings& s) {
  std::cout << "watching '" << c.get_string("watch.folder") << "': every run judged at "
            << io::fmt(s.stop_at)
            << " of its planned last step (watch.final_step = " << s.final_step
            << ", or its final_step column), stopped when "
            << stop_rule_words(s.stop_rule, 1 - s.stop_confidence, s.stop_quantile)
            << "; watch.act = " << c.get_string("watch.act") << std::endl;
  if (!s.final_model.empty())
    std::cout << "final levels from forecast.final_model = '" << forecast::final_model_path(c)
              << "' (pretrained on " << s.final_model.runs << " runs)" << std::endl;
}

// The watch: the reader, the judge and the actions, one poll at a time.
class Watch {
 public:
  explicit Watch(const RunContext& ctx)
      : ctx_(ctx),
        c_(ctx.config),
        judge_(judge_settings(c_)),
        reader_(c_.get_string("watch.folder")),
        actions_(c_.get_string("watch.act"), c_.get_string("watch.scancel_command"),
                 c_.get_string("watch.folder"), ctx.output_path("_watch_actions.log")) {
    restore_earlier_stops(ctx, judge_);
    print_start(c_, judge_.settings());
  }

  // Reads, judges, acts and writes the status; returns why the watch ends ("" to go on).
  std::string poll(long long poll) {
    PollTimes t;
    Kokkos::Timer timer;
    const double now = clock_.seconds();
    for (const std::string& note : reader_.poll(now)) std::cout << "note: " << note << "\n";
    if (reader_.grew()) last_growth_ = now;
    t.read = timer.seconds();
    std::vector<int> stopped_now;
    const auto status = judge_.poll(reader_.runs(), now, stopped_now);
    t.judge = timer.seconds() - t.read;
    const io::WatchPoll p{poll, now, c_.get_string("watch.folder"), count_stopped(status)};
    for (int r : stopped_now)
      std::cout << actions_.stop(poll, reader_.runs()[std::size_t(r)], status[std::size_t(r)])
                << "\n";
    actions_.flush();
    io::write_watch_status(status_path(ctx_), ctx_.resolved_ini, p, judge_.settings(),
                           reader_.runs(), status);
    t.write = timer.seconds() - t.read - t.judge;
    print_poll(p, status, t);
    const std::string why = end_reason(c_, poll, clock_.seconds() - last_growth_, status);
    if (!why.empty())
      std::cout << "watch ends after poll " << poll << ": " << why << "\n"
                << io::watch_status_text(p, reader_.runs(), status) << "wrote " << status_path(ctx_)
                << "\n";
    return why;
  }

 private:
  const RunContext& ctx_;
  const Config& c_;
  forecast::LiveJudge judge_;
  io::LiveSweepReader reader_;
  WatchActions actions_;
  Kokkos::Timer clock_;
  double last_growth_ = 0;
};

}  // namespace

void check_watch_inputs(const RunContext& ctx) {
  const Config& c = ctx.config;
  check_folder(c.get_string("watch.folder"));
  judge_settings(c);
  if (c.get_string("watch.act") == "scancel")
    check_cancel_command(c.get_string("watch.scancel_command"));
  check_output_file(status_path(ctx), "output.name", ctx.output_dir);
  io::read_stopped_runs(status_path(ctx));  // an earlier watch's status must be readable
}

int run_watch_mode(const RunContext& ctx) {
  train::install_stop_handlers();
  Watch watch(ctx);
  for (long long poll = 1; watch.poll(poll).empty(); ++poll)
    sleep_interval(ctx.config.get_real("watch.interval"));
  return 0;
}

}  // namespace hpt::app
