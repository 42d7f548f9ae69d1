#include "app/watch_options.hpp"

#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "forecast/forecast_options.hpp"

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
  s.add_string("watch.rejudge_at", "",
               "fractions of the planned last step, above forecast.stop_at and below 1, "
               "increasing, at which a run kept so far is judged again (e.g. 0.5); empty: each run "
               "is judged once");
  s.add_real("watch.max_stop_fraction", 0.5,
             "at most this fraction of the live runs is stopped in one poll (the rest wait for the "
             "next)",
             0, 1);
}

std::vector<double> judgment_rungs(const Config& c) {
  std::vector<double> rungs{c.get_real("forecast.stop_at")};
  const std::string& text = c.get_string("watch.rejudge_at");
  if (split_list(text).empty()) return rungs;
  for (double f : parse_positive_reals(text, "watch.rejudge_at", "0.5,0.75")) {
    if (f <= rungs.back() || f >= 1)
      throw InputError("watch.rejudge_at = '" + text + "': " + std::to_string(f) +
                       " is out of order; expected increasing fractions above forecast.stop_at = " +
                       std::to_string(rungs.front()) + " and below 1, e.g. '0.5,0.75'");
    rungs.push_back(f);
  }
  return rungs;
}

forecast::LiveJudgeSettings read_live_judge_settings(const Config& c) {
  forecast::LiveJudgeSettings s;
  s.final_step = c.get_int("watch.final_step");
  s.every = c.get_int("forecast.every");
  s.stop_at = c.get_real("forecast.stop_at");
  s.stop_confidence = c.get_real("forecast.stop_confidence");
  s.stop_rule = forecast::stop_rule_from_config(c);
  s.stop_quantile = forecast::stop_quantile_from_config(c);
  s.stop_against = forecast::stop_against_from_config(c);
  s.by_validation = c.get_string("forecast.stop_on") == "validation";
  s.stale_after = c.get_real("watch.stale_after");
  s.max_stop_fraction = c.get_real("watch.max_stop_fraction");
  s.rungs = judgment_rungs(c);
  return s;
}

}  // namespace hpt::app
