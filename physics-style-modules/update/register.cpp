#include "physics-style-modules/update/register.hpp"

#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "physics-style-modules/update/anchored_differences.hpp"
#include "physics-style-modules/update/discounted_trend.hpp"
#include "physics-style-modules/update/extrapolate.hpp"
#include "physics-style-modules/update/finite_difference.hpp"
#include "physics-style-modules/update/frozen.hpp"
#include "physics-style-modules/update/mode_decomposition.hpp"

namespace hpt {

void declare_update_options(OptionSchema& schema) {
  add_style_choice<UpdatePredictor>(
      schema, "update", "linear", register_update_styles,
      "how a predict block advances the parameters: linear or quadratic "
      "extrapolation of real snapshots, extrapolate (fitted decay of the real "
      "updates), trend (a line fitted to every real step by discounted least "
      "squares), dmd (the trajectory advanced in the subspace of its recent "
      "displacements by dynamic mode decomposition), none (frozen)");
  schema.add_int("update.lag", 10,
                 "linear/quadratic and dmd: real steps between the snapshots; trend: the fit's "
                 "time constant (step j back weighted (1 - 1/lag)^j; at least 2)",
                 1, 100000);
  schema.add_choice("update.trend_origin", "fitted", {"fitted", "current"},
                    "trend: the line starts at the fitted level (smoothing the last ~lag steps) "
                    "or at the current parameters (only its slope is used)");
  schema.add_choice(
      "update.snapshots", "every", {"every", "anchors"},
      "linear/quadratic: keep a snapshot after every real step (order x lag + 1 parameter "
      "copies) or an anchor every lag steps (order + 2 copies; differences over lag to 2 lag - 1 "
      "steps)");
  schema.add_int("update.fit_steps", 8, "extrapolate: real updates the (c, rho) fit uses", 1,
                 100000);
  schema.add_int("update.dmd_anchors", 8,
                 "dmd: parameter anchors kept, one every update.lag real steps (their "
                 "displacements are the data of the fit)",
                 3, kMaxAnchors);
  schema.add_int("update.dmd_rank", 4, "dmd: modes kept (at most update.dmd_anchors - 2)", 1,
                 kMaxAnchors - 2);
  schema.add_real("update.ema", 0.9, "extrapolate: EMA decay of the real updates", 0.0, 0.999999);
}

int update_parameter_copies(const Config& c) {
  const std::string& style = c.get_string("update.style");
  const int lag = int(c.get_int("update.lag"));
  if (style == "linear" || style == "quadratic") {
    const int order = style == "linear" ? 1 : 2;
    return c.get_string("update.snapshots") == "anchors"
               ? AnchoredDifferencePredictor<ExecSpace, real>::kept_copies(order)
               : FiniteDifferencePredictor<ExecSpace, real>::kept_copies(order, lag);
  }
  if (style == "trend")
    return DiscountedTrendPredictor<ExecSpace, real>::kept_copies(
        c.get_string("update.trend_origin") == "fitted");
  if (style == "dmd")
    return DmdPredictor<ExecSpace, real>::kept_copies(int(c.get_int("update.dmd_anchors")));
  if (style == "extrapolate")
    return ExtrapolatePredictor<ExecSpace, real>::kept_copies(int(c.get_int("update.fit_steps")));
  return 0;
}

namespace {

// linear (order 1) and quadratic (order 2), with snapshots after every step or anchors.
std::unique_ptr<UpdatePredictor> finite_difference(const Config& c, int order) {
  const int lag = int(c.get_int("update.lag"));
  if (c.get_string("update.snapshots") == "anchors")
    return std::make_unique<AnchoredDifferencePredictor<ExecSpace, real>>(order, lag);
  return std::make_unique<FiniteDifferencePredictor<ExecSpace, real>>(order, lag);
}

}  // namespace

void register_update_styles(Registry<UpdatePredictor>& registry) {
  registry.add(
      "linear", [](const Config& c) { return finite_difference(c, 1); },
      "theta_t + k (theta_t - theta_{t-d}) / d");
  registry.add(
      "quadratic", [](const Config& c) { return finite_difference(c, 2); },
      "second-order extrapolation of three snapshots d apart");
  registry.add(
      "extrapolate",
      [](const Config& c) -> std::unique_ptr<UpdatePredictor> {
        return std::make_unique<ExtrapolatePredictor<ExecSpace, real>>(
            int(c.get_int("update.fit_steps")), c.get_real("update.ema"));
      },
      "per tensor c rho^k times the bias-corrected EMA of the real updates");
  registry.add(
      "trend",
      [](const Config& c) -> std::unique_ptr<UpdatePredictor> {
        return std::make_unique<DiscountedTrendPredictor<ExecSpace, real>>(
            int(c.get_int("update.lag")), c.get_string("update.trend_origin") == "fitted");
      },
      "a - c k: per parameter the line fitted to the real steps, step j back weighted "
      "(1 - 1/lag)^j");
  registry.add(
      "dmd",
      [](const Config& c) -> std::unique_ptr<UpdatePredictor> {
        const int anchors = int(c.get_int("update.dmd_anchors"));
        const int rank = int(c.get_int("update.dmd_rank"));
        if (rank > anchors - 2)
          throw InputError("update.dmd_rank = " + std::to_string(rank) +
                           ": expected at most update.dmd_anchors - 2 = " +
                           std::to_string(anchors - 2) + " (the fit has anchors - 2 pairs)");
        return std::make_unique<DmdPredictor<ExecSpace, real>>(int(c.get_int("update.lag")),
                                                               anchors, rank);
      },
      "theta_t plus the displacements that dynamic mode decomposition of the anchors' "
      "displacements predicts");
  registry.add(
      "none",
      [](const Config&) -> std::unique_ptr<UpdatePredictor> {
        return std::make_unique<FrozenPredictor<ExecSpace, real>>();
      },
      "parameters frozen during predict blocks");
}

}  // namespace hpt
