#pragma once
// What a stop decision of run.mode = watch does (watch.act): nothing, a <run>.stop file in the
// watched folder for scripts that check it, or the cancellation of the run's batch job. Every
// decision is logged with its evidence in <name>_watch_actions.log (replaced atomically after each
// poll, so it is never torn).
#include <string>
#include <vector>

#include "forecast/live_judge.hpp"
#include "forecast/live_run.hpp"

namespace hpt::app {

class WatchActions {
 public:
  WatchActions(std::string act, std::string scancel_command, std::string folder,
               std::string log_path);
  // Acts on the stop of `run` and adds it to the log; returns the log line.
  std::string stop(long long poll, const forecast::LiveRun& run, const forecast::RunStatus& st);
  // Writes the log when it gained lines (once per poll).
  void flush();

 private:
  std::string act_on(const forecast::LiveRun& run, const forecast::RunStatus& st);
  std::string act_, scancel_command_, folder_, log_path_;
  std::string log_;  // the whole log, rewritten at every poll that acted
  bool log_changed_ = false;
};

// The stop file of a run: <folder>/<id>.stop, with '/' in the id written as '_'.
std::string stop_file_path(const std::string& folder, const std::string& run_id);

// Runs `command job` without a shell and returns its exit status (127 when it cannot be started).
int run_cancel_command(const std::string& command, const std::string& job);

// InputError naming watch.scancel_command unless it names an executable file or a program on PATH.
void check_cancel_command(const std::string& command);

}  // namespace hpt::app
