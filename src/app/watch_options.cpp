#include "app/watch_options.hpp"

namespace hpt::app {

void declare_watch_options(OptionSchema& s) {
  s.add_string("watch.folder", "",
               "folder of the live sweep's curve files: <run>.csv (step,loss[,lr,val_loss,group,"
               "job]), wide CSV (step and one column per run) and hpt traces <run>_trace.h5");
  s.add_int("watch.final_step", 0,
            "the runs' planned last step: the step whose loss is forecast, and forecast.stop_at "
            "of it is where every run is judged; a run's final_step column overrides it for its "
            "group (0: only from those columns)",
            0, 1L << 50);
  s.add_real("watch.interval", 60, "seconds between two polls of the folder", 0.01, 86400);
  s.add_int("watch.max_polls", 0, "polls before the watch ends (0: until every run is done)", 0,
            1L << 40);
  s.add_real("watch.idle_exit", 3600,
             "the watch ends when no file gained a row for this many seconds (0: never)", 0, 1e9);
  s.add_real("watch.stale_after", 600,
             "a run without a new row for this many seconds no longer holds back the judgment of "
             "the other runs of its group",
             0, 1e9);
  s.add_choice("watch.act", "none", {"none", "file", "scancel"},
               "what a stop decision does: none (status and log only), file (writes <run>.stop in "
               "the folder, for scripts that check it) or scancel (cancels the run's job)");
  s.add_string("watch.scancel_command", "scancel",
               "the command that cancels a job with watch.act = scancel, called as COMMAND JOBID");
  s.add_real("watch.max_stop_fraction", 0.5,
             "at most this fraction of the live runs is stopped in one poll (the rest wait for the "
             "next)",
             0, 1);
}

forecast::LiveJudgeSettings read_live_judge_settings(const Config& c) {
  forecast::LiveJudgeSettings s;
  s.final_step = c.get_int("watch.final_step");
  s.every = c.get_int("forecast.every");
  s.stop_at = c.get_real("forecast.stop_at");
  s.stop_confidence = c.get_real("forecast.stop_confidence");
  s.by_validation = c.get_string("forecast.stop_on") == "validation";
  s.stale_after = c.get_real("watch.stale_after");
  s.max_stop_fraction = c.get_real("watch.max_stop_fraction");
  return s;
}

}  // namespace hpt::app
