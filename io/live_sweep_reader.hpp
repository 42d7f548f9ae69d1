#pragma once
// The curve files of a live sweep (run.mode = watch; docs/watch.md#inputs), in one folder that
// training jobs write to while it is read:
//   <run>.csv         one run per file, header with `step` and `loss` and any of `lr`, `val_loss`,
//                     `group`, `job`, `final_step` (rows appended as the run logs them);
//   <any>.csv         a wide file whose header is `step` and then one column per run (the export
//                     of an experiment tracker);
//   <run>_trace.h5    hpt's own train trace (replaced atomically as the run goes);
//   <run>.lr          the run's planned learning rate of every step (`step,lr` rows, written once
//                     when it starts), which its forecasts need and its curve file cannot hold yet.
// Each poll reads only what was appended since the previous one. A torn last line waits for its
// newline; a step at or before the run's newest step means the run restarted from a checkpoint:
// its curve is cut before that step, with a note; a non-finite loss ends the curve; a vanished file
// marks its runs gone; a file seen for the first time adds its runs.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "forecast/live_run.hpp"
#include "io/growing_file.hpp"

namespace hpt::io {

class LiveSweepReader {
 public:
  explicit LiveSweepReader(std::string folder);
  ~LiveSweepReader();
  LiveSweepReader(const LiveSweepReader&) = delete;
  LiveSweepReader& operator=(const LiveSweepReader&) = delete;
  // Reads what the folder's files gained since the previous poll (`now`: seconds since the watch
  // began, stored as a run's time of its newest row). Returns the notes of this poll: new files,
  // restarts, divergences, vanished files, lines that could not be read.
  std::vector<std::string> poll(double now);
  const std::vector<forecast::LiveRun>& runs() const { return runs_; }
  bool grew() const { return grew_; }  // a row was added in the last poll

 private:
  struct CsvSource;
  struct TraceSource;
  void scan(std::vector<std::string>& notes);
  void read_csv(CsvSource& src, double now, std::vector<std::string>& notes);
  void read_header(CsvSource& src, const std::string& line, std::vector<std::string>& notes);
  void read_row(CsvSource& src, const std::string& line, long number, double now,
                std::vector<std::string>& notes);
  void read_trace(TraceSource& src, double now, std::vector<std::string>& notes);
  void read_plan(TraceSource& src, std::vector<std::string>& notes);
  void attach_plans();
  int run_index(const std::string& id, const std::string& file);
  void mark_gone(const std::string& file, std::vector<std::string>& notes);

  std::string folder_;
  std::vector<forecast::LiveRun> runs_;
  std::map<std::string, std::unique_ptr<CsvSource>> csv_;
  std::map<std::string, std::unique_ptr<TraceSource>> traces_;
  std::map<std::string, std::unique_ptr<TraceSource>> plan_files_;  // <run>.lr, by path
  struct Plan {
    std::vector<long long> steps;
    std::vector<double> lr;
  };
  std::map<std::string, Plan> plans_;  // by run id
  bool plans_changed_ = false;         // a plan was read since attach_plans last copied them
  std::size_t runs_with_plans_ = 0;    // runs_ when attach_plans last copied them
  bool grew_ = false;
};

// One row of a run, as any source gives it. NaN: the cell was empty.
struct LiveRow {
  long long step = 0;
  bool has_loss = false;  // the loss cell was not empty (it may hold nan or inf: a divergence)
  double loss = 0, lr = 0, val_loss = 0;
};

// Adds `row` to `run` by the rules above (restart cut, divergence, validation point); true when
// the curve changed. `where` names the row in notes ("'f.csv' line 7").
bool append_live_row(forecast::LiveRun& run, const LiveRow& row, const std::string& where,
                     std::vector<std::string>& notes);

}  // namespace hpt::io
