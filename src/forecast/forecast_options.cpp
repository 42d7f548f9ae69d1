#include "forecast/forecast_options.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "forecast/baselines.hpp"
#include "forecast/curve_study.hpp"

namespace hpt::forecast {

namespace {

std::string format_real(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// A valid forecast.horizons, quoted in its error messages.
const char* const kHorizonsExample = "10,50,100,200";

// The online fine-tuning of the learned level forecaster (forecast/level_finetune.hpp).
void declare_finetune_options(OptionSchema& s) {
  const FinetuneSettings d{};
  s.add_choice("forecast.finetune", "off", {"off", "on"},
               "online fine-tuning of the learned level forecaster: on refits its quantile "
               "regressions per group on the samples realised so far, pulled towards the "
               "pretrained weights (docs/method.md#online-fine-tuning; it did not help on the "
               "project's corpora); off keeps the pretrained weights");
  s.add_int("forecast.finetune_every", d.every,
            "steps between two refits of forecast.finetune = on (at the first step at or past "
            "each multiple)",
            1, 1000000000L);
  s.add_real("forecast.finetune_strength", d.strength,
             "the fine-tuning's pull towards the pretrained weights, per realised sample "
             "(standardised features; larger stays closer to the pretrained model)",
             1e-6, 1e6);
  s.add_int("forecast.finetune_samples", d.max_samples,
            "most realised samples of one group's refit (an evenly spaced subset beyond)", 100,
            1000000);
}

// forecast.finetune* (forecast.finetune = on needs a pretrained model to start from).
FinetuneSettings read_finetune_settings(const Config& c) {
  FinetuneSettings s;
  s.on = c.get_string("forecast.finetune") == "on";
  s.every = c.get_int("forecast.finetune_every");
  s.strength = c.get_real("forecast.finetune_strength");
  s.max_samples = int(c.get_int("forecast.finetune_samples"));
  if (s.on && c.get_string("forecast.pretrained") == "none")
    throw InputError(
        "forecast.finetune = on: it fine-tunes the pretrained level forecaster, but "
        "forecast.pretrained = none; expected forecast.pretrained = default or a model file, or "
        "forecast.finetune = off");
  return s;
}

}  // namespace

StopRule stop_rule_from_config(const Config& c) {
  const std::string rule = c.get_string("forecast.stop_rule");
  return rule == "median" ? StopRule::kMedian
         : rule == "both" ? StopRule::kBoth
                          : StopRule::kProbability;
}

double stop_quantile_from_config(const Config& c) {
  const double q = c.get_real("forecast.stop_quantile");
  if (!(q > 0 && q < 1))
    throw InputError("forecast.stop_quantile = " + format_real(q) +
                     ": expected a quantile strictly between 0 and 1, e.g. 0.4");
  return q;
}

StopAgainst stop_against_from_config(const Config& c) {
  return c.get_string("forecast.stop_against") == "median" ? StopAgainst::kMedian
                                                           : StopAgainst::kInterval;
}

void declare_forecast_options(OptionSchema& s) {
  s.add_string("forecast.input", "",
               "loss curves to forecast: HDF5 (/runs/<id>/step, loss[, lr, grad_norm, val_step, "
               "val_loss]) or CSV with the columns run,step,loss[,lr,grad_norm,val_loss,group] in "
               "any order (docs/outputs.md#loss-curves)");
  s.add_bool("forecast.skip_bad_runs", false,
             "skip a malformed run with a warning instead of refusing the file");
  s.add_string("forecast.horizons", "10,50,100,200",
               "forecast horizons in steps (>= 5, increasing)");
  s.add_int("forecast.every", 10, "origin spacing: a forecast at every step divisible by this", 1,
            1000000);
  s.add_int("forecast.scenarios", 32, "rollout samples per ensemble member and run", 1, 1 << 16);
  s.add_real("forecast.stop_at", 0.25,
             "fraction of a run's steps at which the stop list judges it, strictly between 0 and 1",
             0.0, 1.0);
  s.add_real("forecast.stop_confidence", 0.9,
             "a run is stopped when it beats the best other run with probability below 1 - this",
             0.5, 1.0);
  s.add_choice(
      "forecast.stop_rule", "probability", {"probability", "median", "both"},
      "how a judged run is stopped: probability (P(beat the best other run) below 1 - "
      "forecast.stop_confidence), median (that, or its forecast final median above the "
      "median of the other runs' forecast final medians) or both (its forecast final median "
      "and its current level both above the forecast.stop_quantile quantile of the other runs' "
      "of its group: saves more, may stop a best run); median and both need forecast.stop_by = "
      "learned");
  s.add_real("forecast.stop_quantile", 0.4,
             "with forecast.stop_rule = both: the quantile of the other runs' forecast final "
             "medians and current levels that a stopped run lies above on both, strictly "
             "between 0 and 1",
             0.0, 1.0);
  s.add_choice("forecast.stop_against", "interval", {"interval", "median"},
               "what a judged run's forecast final interval is set against: interval (the best "
               "other run's forecast interval: the probability that the judged run ends below "
               "that run) or median (that run's forecast final median alone); with "
               "forecast.stop_by = learned");
  s.add_choice(
      "forecast.stop_by", "learned", {"learned", "hpt"},
      "forecast behind the stop list: learned (the pretrained level forecaster's interval at "
      "the largest horizon; hpt's ensemble when forecast.pretrained = none) or hpt (the "
      "ensemble's calibrated sample paths)");
  s.add_choice("forecast.calibration", "quantile", {"quantile", "scale"},
               "interval calibration per horizon: quantile (adaptive conformal quantile of the "
               "realised targets' scores) or scale (a multiplicative width factor nudged by each "
               "hit or miss)");
  s.add_real("forecast.calibration_rate", 0.05,
             "step size gamma of the adaptive conformal correction per horizon (of the quantile's "
             "level, or of the log width factor)",
             1e-6, 1.0);
  s.add_int("forecast.calibration_window", 200,
            "realised targets per horizon whose scores the quantile calibration keeps (newest)", 10,
            100000);
  s.add_int("forecast.train_runs", 4,
            "runs whose newest transitions train the shared ensemble at each step (one BPTT + Adam "
            "update each, round robin; 0: no online training)",
            0, 1 << 20);
  s.add_string("forecast.model", "", "dynamics model file written by hpt (empty: seeded init)");
  s.add_choice(
      "forecast.stop_on", "train", {"train", "validation"},
      "the level the stop list compares runs by: train (the training loss) or validation "
      "(the validation loss, forecast from the run's validation curve; every run needs val_loss)");
  s.add_choice("forecast.combination_clock", "length", {"length", "steps"},
               "the clock of the combined forecast's evidence (how fast it forgets, how much one "
               "target weighs): length (fractions of each group's planned length: a run logged "
               "at 80 points forgets its evidence as a 2000-step run does, and weighs each target "
               "up to four times more) or steps (logged steps, as on a 2000-step run, whatever "
               "the run's length)");
  s.add_choice("forecast.guard_clamp", "always", {"always", "length", "trend"},
               "where the combined forecast holds its guards (last, loglin, power) inside the "
               "learned 90 % interval: always (with a level model), length (only on runs whose "
               "group's planned length is at least 500 steps, a quarter of the 2000 the "
               "combination's constants are set for: on shorter runs the guards are free) or "
               "trend (as length, but a short run's loglin stays held at origins where its slope "
               "is less than 3 standard errors from zero)");
  s.add_choice("forecast.ensemble", "on", {"on", "off"},
               "hpt's RSSM ensemble (the hpt column, trained online): on, or off for the other "
               "forecasters alone, many times faster on large sweeps");
  declare_finetune_options(s);
}

std::vector<int> parse_horizons(const Config& c) {
  const std::string& text = c.get_string("forecast.horizons");
  const auto list = parse_positive_list(text, "forecast.horizons", kHorizonsExample);
  std::vector<int> h;
  for (long v : list) {
    if (v < kTargetBefore + 1 || v > 100000)
      throw InputError("forecast.horizons = '" + text + "': horizon " + std::to_string(v) +
                       " is out of range; expected steps in [5, 100000] (the target window starts "
                       "4 steps before the horizon), e.g. '" +
                       kHorizonsExample + "'");
    if (!h.empty() && v <= h.back())
      throw InputError("forecast.horizons = '" + text + "': horizons must increase, e.g. '" +
                       kHorizonsExample + "'");
    h.push_back(int(v));
  }
  return h;
}

CurveStudySettings read_curve_study_settings(const Config& c) {
  CurveStudySettings s;
  s.horizons = parse_horizons(c);
  s.every = c.get_int("forecast.every");
  s.scenarios = int(c.get_int("forecast.scenarios"));
  s.train_runs = int(c.get_int("forecast.train_runs"));
  s.calibration = calibration_rule(c.get_string("forecast.calibration"));
  s.calibration_rate = c.get_real("forecast.calibration_rate");
  s.calibration_window = int(c.get_int("forecast.calibration_window"));
  s.stop_at = c.get_real("forecast.stop_at");
  if (!(s.stop_at > 0 && s.stop_at < 1))
    throw InputError("forecast.stop_at = " + format_real(s.stop_at) +
                     ": expected a fraction of each run strictly between 0 and 1, e.g. 0.25");
  s.stop_confidence = c.get_real("forecast.stop_confidence");
  s.stop_by_learned = c.get_string("forecast.stop_by") == "learned";
  s.stop_rule = stop_rule_from_config(c);
  s.stop_against = stop_against_from_config(c);
  s.ensemble = c.get_string("forecast.ensemble") == "on";
  s.stop_on_validation = c.get_string("forecast.stop_on") == "validation";
  s.combination_by_length = c.get_string("forecast.combination_clock") == "length";
  const std::string& clamp = c.get_string("forecast.guard_clamp");
  s.guard_clamp = clamp == "length"  ? GuardClamp::kLength
                  : clamp == "trend" ? GuardClamp::kTrend
                                     : GuardClamp::kAlways;
  if (s.stop_on_validation && !s.stop_by_learned)
    throw InputError(
        "forecast.stop_on = validation: the validation forecast is the learned one, but "
        "forecast.stop_by = hpt; expected forecast.stop_by = learned or forecast.stop_on = train");
  if (s.stop_rule != StopRule::kProbability && !s.stop_by_learned)
    throw InputError("forecast.stop_rule = " + c.get_string("forecast.stop_rule") +
                     ": the rule compares forecast final levels, but forecast.stop_by = hpt; "
                     "expected forecast.stop_by = learned or forecast.stop_rule = probability");
  s.stop_quantile = stop_quantile_from_config(c);
  if (!s.ensemble && !s.stop_by_learned)
    throw InputError(
        "forecast.stop_by = hpt: the stop list needs the ensemble's sample paths, but "
        "forecast.ensemble = off; expected forecast.stop_by = learned or forecast.ensemble = on");
  s.seed = std::uint64_t(c.get_int("run.seed"));
  s.print_every = std::size_t(c.get_int("run.print_every"));
  s.training = rssm_train_options_from_config(c);
  s.finetune = read_finetune_settings(c);
  return s;
}

namespace {

// The longest horizon that run `c` lets a forecast be scored at: from its first origin (the
// kMinOriginEntries-th entry, rounded up to the origin grid) to its last target window.
long long longest_scorable(const Curve& c, long long every) {
  if (c.steps.size() < std::size_t(kMinOriginEntries)) return 0;
  const long long first = c.steps[std::size_t(kMinOriginEntries - 1)];
  const long long origin = (first + every - 1) / every * every;
  return c.steps.back() - kTargetAfter - origin;
}

}  // namespace

void check_stop_level(const CurveStudySettings& s, const CurveSet& set) {
  if (!s.stop_on_validation) return;
  for (const Curve& c : set.runs)
    if (c.val_steps.empty())
      throw InputError("forecast.stop_on = validation: run '" + c.id +
                       "' has no validation losses; expected val_step/val_loss for every run "
                       "(docs/outputs.md#loss-curves), or forecast.stop_on = train");
}

void fit_horizons_to_runs(CurveStudySettings& s, const CurveSet& set,
                          std::vector<std::string>& notes) {
  long long longest = 0;
  std::string run;
  for (const Curve& c : set.runs)
    if (longest_scorable(c, s.every) > longest) longest = longest_scorable(c, s.every), run = c.id;
  std::vector<int> kept, dropped;
  for (int h : s.horizons) (h <= longest ? kept : dropped).push_back(h);
  std::string list;
  for (int h : dropped) list += (list.empty() ? "" : ",") + std::to_string(h);
  const std::string why = "the longest run" + (run.empty() ? std::string() : " ('" + run + "')") +
                          " can score horizons up to " + std::to_string(std::max(0LL, longest)) +
                          " steps (a forecast starts at a run's " +
                          std::to_string(kMinOriginEntries) +
                          "th step and its target window ends " + std::to_string(kTargetAfter) +
                          " steps after the horizon)";
  if (kept.empty())
    throw InputError("forecast.horizons = '" + list + "': no run is long enough to score any of " +
                     "them; " + why);
  if (!dropped.empty()) notes.push_back("forecast.horizons " + list + " dropped: " + why);
  s.horizons = kept;
}

}  // namespace hpt::forecast
