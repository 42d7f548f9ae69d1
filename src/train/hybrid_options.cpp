#include "train/hybrid_options.hpp"

#include "core/config_lists.hpp"
#include "train/hybrid_controllers.hpp"

namespace hpt::train {

void declare_hybrid_options(OptionSchema& s) {
  ControllerRegistry controllers("hybrid controller", "hybrid.controller");
  register_hybrid_controllers(controllers);
  s.add_choice(
      "hybrid.controller", "hpt", controllers.names(),
      "hpt: verified predict blocks (docs/method.md#hybrid-training-loop); prototype: the "
      "prototype's schedule and confidence, for comparison (needs dynamics.style = "
      "rssm_prototype, encoder.style = prototype, gru.reset = before, update.style = none)");
  s.add_real("prototype.threshold", 0.85,
             "hybrid.controller = prototype: confidence that opens a predict block", 0.0, 1.0);
  s.add_int("prototype.max_predict", 15,
            "hybrid.controller = prototype: longest predict block (the shortest is 10)", 1,
            1 << 20);
  s.add_int("hybrid.warmup", 100, "real steps before the first predict decision", 0);
  s.add_int("hybrid.full_steps", 20, "length of a Full block (real steps)", 1, 1 << 30);
  s.add_int("hybrid.correct_steps", 5, "length of a Correct block after an accepted predict block",
            1, 1 << 30);
  s.add_int("hybrid.max_predict_blocks", 5, "predict blocks in a row before a Full block", 1,
            1 << 30);
  s.add_int("hybrid.lr_halve_steps", 50,
            "steps at half learning rate after a critical divergence alarm", 0, 1 << 30);
  s.add_real("monitor.sigma", 3.0,
             "divergence monitor: a loss this many running standard deviations from its running "
             "mean warns (a Full block), twice as many is critical (restore the last snapshot, "
             "halve the learning rate); raise it where full training's own loss spikes",
             0.01, 1e12);
  s.add_real("monitor.grad_explode", 100.0,
             "divergence monitor: a gradient norm this many times its early level warns, ten "
             "times as many is critical",
             1.0, 1e12);
  s.add_real("monitor.grad_vanish", 0.01,
             "divergence monitor: a gradient norm below this fraction of its early level warns "
             "(no predict block while it lasts; never critical); 0 turns the check off",
             0.0, 1.0);
  s.add_int("monitor.escalate_after", 3,
            "divergence monitor: this many divergent warnings in a row are critical (0: never)", 0,
            1 << 30);
  s.add_int("predict.max_horizon", 50,
            "longest predict block; its horizons are those of forecast.horizons up to this", 1,
            1 << 20);
  s.add_real("predict.tol", 0.01,
             "accept a predict block when the probe loss is <= (1 + tol) x the loss before it "
             "(and within the forecast's 95 % bound); a negative tol demands an improvement",
             -1.0, 10.0);
  s.add_real("predict.confidence", 1.0,
             "enter a predict block of Y steps when the forecast std of log L at Y is <= this x "
             "the forecast improvement of log L",
             0.0, 1e6);
  s.add_real("predict.min_coverage", 0.8,
             "enter only at horizons whose scored 90 % intervals covered at least this fraction",
             0.0, 1.0);
  s.add_int("predict.min_scored", 5, "forecasts scored at a horizon before its coverage counts", 0,
            1 << 30);
  s.add_int("predict.retry_after", 0,
            "real steps without a rollback after which the horizon cap, halved by a rollback, "
            "doubles again (0: only an accepted block raises it, so a rollback at the shortest "
            "horizon ends predicting for the run)",
            0, 1 << 30);
  s.add_string(
      "predict.step_scales", "1",
      "fractions of a predict block's motion (from its start to its predicted end) tried "
      "on the probe set at the block's end, e.g. 1,0.5,0.25; the one with the lowest probe "
      "loss is verified and kept or rolled back (1: the predicted end as is)");
  s.add_choice("predict.momentum_after_accept", "keep", {"keep", "zero"},
               "after a kept predict block: keep the optimizer's first moment (SGD momentum, Adam "
               "m) as the last real step left it, or zero it so that it rebuilds from gradients at "
               "the predicted parameters (Adam's second moment and step count are kept)");
  s.add_choice("predict.probe_every", "step", {"step", "end"},
               "forward passes during a predict block: every step (telemetry continues) or only "
               "the verification at the end (largest saving)");
  s.add_int("predict.probe_rows", 512,
            "rows of the fixed probe set that verifies a predict block (from the probe part when "
            "dataset.probe_fraction > 0, else from the validation rows)",
            1, 1 << 30);
}

HybridSettings read_hybrid_settings(const Config& c) {
  HybridSettings h;
  h.warmup = c.get_int("hybrid.warmup");
  h.full_steps = int(c.get_int("hybrid.full_steps"));
  h.correct_steps = int(c.get_int("hybrid.correct_steps"));
  h.max_predict_blocks = int(c.get_int("hybrid.max_predict_blocks"));
  h.lr_halve_steps = int(c.get_int("hybrid.lr_halve_steps"));
  h.max_horizon = int(c.get_int("predict.max_horizon"));
  h.tol = c.get_real("predict.tol");
  h.confidence = c.get_real("predict.confidence");
  h.min_coverage = c.get_real("predict.min_coverage");
  h.min_scored = int(c.get_int("predict.min_scored"));
  h.probe_every_step = c.get_string("predict.probe_every") == "step";
  h.probe_rows = int(c.get_int("predict.probe_rows"));
  h.retry_after = int(c.get_int("predict.retry_after"));
  h.zero_momentum_after_accept = c.get_string("predict.momentum_after_accept") == "zero";
  h.step_scales = parse_positive_reals(c.get_string("predict.step_scales"), "predict.step_scales",
                                       "1,0.5,0.25");
  h.monitor.sigma = c.get_real("monitor.sigma");
  h.monitor.grad_explode = c.get_real("monitor.grad_explode");
  h.monitor.grad_vanish = c.get_real("monitor.grad_vanish");
  h.monitor.escalate_after = int(c.get_int("monitor.escalate_after"));
  return h;
}

PrototypeSchedule read_prototype_schedule(const Config& c) {
  PrototypeSchedule p;
  p.warmup = c.get_int("hybrid.warmup");
  p.full_steps = int(c.get_int("hybrid.full_steps"));
  p.correct_steps = int(c.get_int("hybrid.correct_steps"));
  p.max_predict_blocks = int(c.get_int("hybrid.max_predict_blocks"));
  p.max_predict = int(c.get_int("prototype.max_predict"));
  p.threshold = c.get_real("prototype.threshold");
  return p;
}

}  // namespace hpt::train
