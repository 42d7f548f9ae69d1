#pragma once
// The status of a live sweep (run.mode = watch; docs/outputs.md#watch-status), replaced atomically
// at every poll: <name>_watch.h5 (root attributes; /runs/<i>: the names, decision and reason of run
// i; /status: its numbers as columns; /curves and /fans: every run's curve, thinned to at most 512
// rows, and its forecast to the last step) and <name>_watch.txt (the same as a short text table).
#include <string>
#include <vector>

#include "forecast/live_judge.hpp"
#include "forecast/live_run.hpp"

namespace hpt::io {

struct WatchPoll {
  long long poll = 0;
  double seconds = 0;  // since the watch began
  std::string folder;
  long long stopped = 0;
};

void write_watch_status(const std::string& path, const std::string& deck_text,
                        const WatchPoll& poll, const forecast::LiveJudgeSettings& settings,
                        const std::vector<forecast::LiveRun>& runs,
                        const std::vector<forecast::RunStatus>& status);

// The text table: one line per run (id, group, step, forecast final loss with its 90 % interval,
// P(beat best other), decision, reason).
std::string watch_status_text(const WatchPoll& poll, const std::vector<forecast::LiveRun>& runs,
                              const std::vector<forecast::RunStatus>& status);

// A run that a status file written earlier says was stopped (a restarted watch keeps its
// decisions).
struct StoppedRun {
  std::string id, reason;
  long long step = -1;
};
// Empty when there is no such file.
std::vector<StoppedRun> read_stopped_runs(const std::string& path);

}  // namespace hpt::io
