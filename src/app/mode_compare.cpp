#include "app/mode_compare.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <utility>

#include "app/arm_result.hpp"
#include "app/training_run.hpp"
#include "core/config_lists.hpp"
#include "app/output_location.hpp"
#include "core/communicator.hpp"
#include "core/crash_point.hpp"
#include "io/atomic_file.hpp"
#include "io/communication_attributes.hpp"
#include "io/console.hpp"
#include "io/hdf5_format.hpp"

namespace hpt::app {

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const char* const kArms[] = {"full", "hybrid", "budget", "freeze"};

struct ArmResult {
  train::TrainSummary summary;
  double val_at_budget = kNaN;  // validation loss after the hybrid arm's number of backward passes
  // Wall time to the loss this arm and full both reach (the higher of their final validation
  // losses): this arm's seconds and full's seconds to it.
  double common_loss = kNaN, seconds_to_common = kNaN, full_seconds_to_common = kNaN;
};

std::vector<long> seeds_of(const Config& c) {
  const std::string s = c.get_string("compare.seeds");
  if (s.empty()) return {c.get_int("run.seed")};
  return parse_positive_list(s, "compare.seeds", "1,2,3");
}

std::vector<double> budget_lr_factors_of(const Config& c) {
  return parse_positive_reals(c.get_string("compare.budget_lr_factors"),
                              "compare.budget_lr_factors", "0.5,1,2,4");
}

// The budget arm at one factor of the deck's learning rate; with more than one factor each run is
// named after its factor (<name>_s<seed>_budget_lr<factor>).
void scale_budget_rate(Config& c, const Config& base, double factor, bool several) {
  std::ostringstream lr;
  lr << std::setprecision(17) << base.get_real("optimizer.lr") * factor;
  c.set("optimizer.lr", lr.str(), "compare arm budget");
  if (several)
    c.set("output.name", c.get_string("output.name") + "_lr" + io::fmt(factor, 6),
          "compare arm budget");
}

// The index of the smallest mean; a non-finite loss counts as infinite.
std::size_t lowest_mean(const std::vector<std::vector<ArmResult>>& runs,
                        std::vector<double>& means) {
  std::size_t best = 0;
  means.assign(runs.size(), 0.0);
  for (std::size_t k = 0; k < runs.size(); ++k) {
    for (const ArmResult& r : runs[k]) {
      const double l = r.summary.final_val_loss;
      means[k] +=
          (std::isfinite(l) ? l : std::numeric_limits<double>::infinity()) / double(runs[k].size());
    }
    if (means[k] < means[best]) best = k;
  }
  return best;
}

// The validation loss of `points` after `backward` backward passes, interpolated linearly between
// the two validations around it (NaN beyond the last).
double loss_at_backward(const std::vector<train::ValidationPoint>& points, double backward) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (points[i].backward < backward) continue;
    if (i == 0 || points[i].backward == backward) return points[i].loss;
    const auto& a = points[i - 1];
    const auto& b = points[i];
    const double f = (backward - double(a.backward)) / double(b.backward - a.backward);
    return a.loss + f * (b.loss - a.loss);
  }
  return kNaN;
}

// The wall time at which `points` first reach a validation loss <= `loss`, interpolated linearly in
// time between the two validations around the crossing (NaN when never reached).
double seconds_to_loss(const std::vector<train::ValidationPoint>& points, double loss) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].loss <= loss)) continue;
    if (i == 0 || points[i].loss == loss) return points[i].seconds;
    const auto& a = points[i - 1];
    const auto& b = points[i];
    const double f = (a.loss - loss) / (a.loss - b.loss);
    return a.seconds + f * (b.seconds - a.seconds);
  }
  return kNaN;
}

// The deck of one arm: run.seed, train.hybrid, steps and the compressed schedule, output name.
Config arm_config(const Config& base, const std::string& arm, long seed, std::int64_t budget,
                  const std::string& name) {
  Config c = base;
  const std::string origin = "compare arm " + arm;
  c.set("run.mode", "train", origin);
  c.set("run.restart", "", origin);  // an arm that did not finish trains again from the start
  c.set("run.seed", std::to_string(seed), origin);
  c.set("output.name", name + "_s" + std::to_string(seed) + "_" + arm, origin);
  c.set("train.hybrid", arm == "hybrid" ? "on" : "off", origin);
  // Every arm trains the same forecaster, so its cost shows in the wall time only where it is used.
  c.set("train.forecaster", arm == "hybrid" ? "true" : "false", origin);
  if (arm == "budget") {
    const double f = double(budget) / double(base.get_int("train.steps"));
    c.set("train.steps", std::to_string(budget), origin);
    c.set("schedule.warmup", std::to_string(long(std::lround(base.get_int("schedule.warmup") * f))),
          origin);
    c.set("schedule.step_size",
          std::to_string(std::max(1L, long(std::lround(base.get_int("schedule.step_size") * f)))),
          origin);
    if (base.get_int("schedule.total_steps") > 0)
      c.set(
          "schedule.total_steps",
          std::to_string(std::max(1L, long(std::lround(base.get_int("schedule.total_steps") * f)))),
          origin);
  }
  return c;
}

std::string mean_spread(const std::vector<double>& v, int digits) {
  double mean = 0, lo = 1e300, hi = -1e300;
  for (double x : v) mean += x / double(v.size()), lo = std::min(lo, x), hi = std::max(hi, x);
  if (v.size() == 1) return io::fmt(mean, digits);
  return io::fmt(mean, digits) + " [" + io::fmt(lo, digits) + ", " + io::fmt(hi, digits) + "]";
}

}  // namespace

void declare_compare_options(OptionSchema& s) {
  s.add_string("compare.seeds", "",
               "run.mode = compare: seeds of the comparison, e.g. 1,2,3 (empty: run.seed); each "
               "seed trains the four arms full, hybrid, budget, freeze");
  s.add_string("compare.budget_lr_factors", "1",
               "run.mode = compare: factors of optimizer.lr at which the budget arm trains, e.g. "
               "0.5,1,2,4; with more than one, every seed trains the budget arm at each and the "
               "comparison keeps the factor with the lowest mean final validation loss over the "
               "seeds (budget at its own tuned rate)");
}

void check_compare_inputs(const RunContext& ctx) {
  const Config& c = ctx.config;
  if (c.get_string("train.hybrid") != "on")
    throw InputError("train.hybrid = '" + c.get_string("train.hybrid") +
                     "': run.mode = compare judges a hybrid deck; expected train.hybrid = on");
  const std::string restart = c.get_string("run.restart");
  if (!restart.empty() && restart != "auto")
    throw InputError("run.restart = '" + restart +
                     "': run.mode = compare continues a stopped comparison from the arms that "
                     "finished; expected auto or empty");
  seeds_of(c);
  budget_lr_factors_of(c);
  check_training_inputs(ctx);
  check_output_file(ctx.output_path("_compare.h5"), "output.name", ctx.output_dir);
}

namespace {

// Every arm of every seed, and what the budget and freeze arms take from the hybrid arm.
struct CompareRuns {
  std::vector<long> seeds;
  std::vector<double> factors;                            // of optimizer.lr, for the budget arm
  std::map<std::string, std::vector<ArmResult>> results;  // [arm][seed]
  std::vector<std::vector<ArmResult>> budget_runs;        // [factor][seed]
  std::vector<std::int64_t> budgets;  // the hybrid arm's backward passes per seed
  std::vector<double> budget_means;   // mean final validation loss per factor
  std::size_t chosen = 0;             // the budget arm's factor
};

// Data-parallel: whether `yes` holds on every process (one allreduce), so that all of them read
// an arm back or all train it again.
bool every_process(const Communicator& comm, bool yes) {
  std::int64_t n = yes ? 1 : 0;
  comm.allreduce_sum(&n, 1, Traffic::Control);
  return n == comm.size();
}

// One arm: read back from its result file when a stopped comparison continues, else trained.
ArmResult run_arm(const RunContext& actx, bool resume, const std::vector<char>* pattern) {
  ArmResult r;
  const std::string result_path = actx.output_path("_arm.h5");
  const Communicator world = Communicator::world();
  StoredArm stored;
  if (resume) stored = read_arm_result(result_path, actx.resolved_ini);
  if (resume && !every_process(world, stored.summary.has_value()) && stored.summary) {
    stored.summary.reset();
    stored.why_not = "another process cannot read it";
  }
  if (stored.summary) {
    r.summary = std::move(*stored.summary);
    std::cout << "finished earlier: read from " << result_path << "\n";
    return r;
  }
  if (!stored.why_not.empty())
    std::cout << "not reading " << result_path << " (" << stored.why_not
              << "): training the arm again\n";
  r.summary = train_run(actx, pattern);
  if (r.summary.stop_signal == 0 && world.is_root())
    write_arm_result(result_path, actx.resolved_ini, r.summary);
  return r;
}

void announce_arm(long seed, const std::string& arm, const std::vector<double>& factors,
                  std::size_t k) {
  std::cout << "\n=== compare: seed " << seed << ", arm " << arm;
  if (arm == "budget" && factors.size() > 1)
    std::cout << " at " << io::fmt(factors[k], 6) << " x optimizer.lr";
  std::cout << " ===\n";
}

// An arm cut short by a signal would enter the table as if complete: say so and stop.
int stopped_by_signal(long seed, const std::string& arm, const train::TrainSummary& s) {
  std::cout << "compare stopped: seed " << seed << ", arm " << arm << " was stopped by signal "
            << s.stop_signal << " after step " << s.last_step
            << "; no comparison written (rerun with --set run.restart=auto to continue "
               "from the arms that finished)"
            << std::endl;
  return kExitStoppedBySignal;
}

// Trains (or reads back) the four arms of one seed; a nonzero exit code when a signal stopped one.
int run_seed(const RunContext& ctx, long seed, CompareRuns& runs, int& arms_done) {
  const Config& base = ctx.config;
  const bool resume = base.get_string("run.restart") == "auto";
  std::int64_t budget = 0;
  std::vector<char> pattern;
  for (const std::string arm : kArms) {
    const std::size_t count = arm == "budget" ? runs.factors.size() : 1;
    for (std::size_t k = 0; k < count; ++k) {
      Config c = arm_config(base, arm, seed, budget, ctx.output_name);
      if (arm == "budget") scale_budget_rate(c, base, runs.factors[k], runs.factors.size() > 1);
      const RunContext actx{c, ctx.deck_path, c.to_ini(), ctx.output_dir,
                            c.get_string("output.name")};
      announce_arm(seed, arm, runs.factors, k);
      ArmResult r = run_arm(actx, resume, arm == "freeze" ? &pattern : nullptr);
      crash_point("compare_arm_done", ++arms_done);
      if (r.summary.stop_signal != 0) return stopped_by_signal(seed, arm, r.summary);
      if (arm == "hybrid") {
        budget = std::max<std::int64_t>(1, r.summary.backward_passes);
        pattern = r.summary.real_steps;
      }
      (arm == "budget" ? runs.budget_runs[k] : runs.results[arm]).push_back(std::move(r));
    }
  }
  runs.budgets.push_back(budget);
  return 0;
}

// The budget arm at its own rate: the factor chosen over all seeds at once, as full's rate was.
void choose_budget_rate(CompareRuns& runs) {
  runs.chosen = lowest_mean(runs.budget_runs, runs.budget_means);
  runs.results["budget"] = std::move(runs.budget_runs[runs.chosen]);
  if (runs.factors.size() < 2) return;
  std::cout << "\nbudget arm: mean final validation loss by factor of optimizer.lr:";
  for (std::size_t k = 0; k < runs.factors.size(); ++k)
    std::cout << (k ? "," : "") << " " << io::fmt(runs.factors[k], 6) << " -> "
              << io::fmt(runs.budget_means[k], 5);
  std::cout << "; kept " << io::fmt(runs.factors[runs.chosen], 6) << "\n";
}

// Each arm's loss at the hybrid arm's backward passes and its time to the loss it shares with full.
void compare_with_full(CompareRuns& runs) {
  for (std::size_t i = 0; i < runs.seeds.size(); ++i) {
    const auto& full = runs.results["full"][i].summary;
    for (const std::string arm : kArms) {
      ArmResult& r = runs.results[arm][i];
      r.val_at_budget = loss_at_backward(r.summary.validations, double(runs.budgets[i]));
      r.common_loss = std::max(r.summary.final_val_loss, full.final_val_loss);
      r.seconds_to_common = seconds_to_loss(r.summary.validations, r.common_loss);
      r.full_seconds_to_common = seconds_to_loss(full.validations, r.common_loss);
    }
  }
}

// The table's columns; a data-parallel comparison adds each arm's communication.
std::vector<std::string> compare_columns(bool data_parallel) {
  std::vector<std::string> c = {"arm",
                                "final val loss",
                                "final val accuracy %",
                                "backward passes",
                                "wall time s",
                                "val loss at hybrid's backward passes",
                                "time to common loss / full's"};
  if (data_parallel) c.insert(c.end(), {"communicated MB", "communication s"});
  return c;
}

void print_compare_table(CompareRuns& runs) {
  const bool data_parallel = Communicator::world().size() > 1;
  io::TextTable table(compare_columns(data_parallel));
  for (const std::string arm : kArms) {
    std::vector<double> loss, acc, back, wall, at_b, to_common, mb, comm_s;
    for (const ArmResult& r : runs.results[arm]) {
      loss.push_back(r.summary.final_val_loss);
      acc.push_back(100 * r.summary.final_val_accuracy);
      back.push_back(double(r.summary.backward_passes));
      wall.push_back(r.summary.seconds);
      at_b.push_back(r.val_at_budget);
      to_common.push_back(r.seconds_to_common / r.full_seconds_to_common);
      mb.push_back(double(r.summary.communication.total().bytes) / 1e6);
      comm_s.push_back(r.summary.communication.total().seconds);
    }
    std::vector<std::string> row = {arm,
                                    mean_spread(loss, 5),
                                    mean_spread(acc, 4),
                                    mean_spread(back, 5),
                                    mean_spread(wall, 4),
                                    mean_spread(at_b, 5),
                                    mean_spread(to_common, 3)};
    if (data_parallel) row.insert(row.end(), {mean_spread(mb, 4), mean_spread(comm_s, 4)});
    table.add_row(row);
  }
  std::cout << "\ncompare (" << runs.seeds.size() << " seed" << (runs.seeds.size() > 1 ? "s" : "")
            << "; mean [min, max]; common loss: the higher of the arm's and full's final "
               "validation loss, reached first at the wall time compared)\n"
            << table.str();
}

// One seed's verdict: within 1 % of full with at most 60 % of its backward passes, and below
// budget and freeze at equal backward passes. Prints the seed's line; returns whether it won.
bool seed_verdict(CompareRuns& runs, std::size_t i) {
  const auto& full = runs.results["full"][i].summary;
  const auto& hyb = runs.results["hybrid"][i].summary;
  const double budget = runs.results["budget"][i].summary.final_val_loss;
  const double freeze = runs.results["freeze"][i].summary.final_val_loss;
  const bool close = hyb.final_val_loss <= 1.01 * full.final_val_loss;
  const bool fewer = double(hyb.backward_passes) <= 0.6 * double(full.backward_passes);
  const bool beats = hyb.final_val_loss < budget && hyb.final_val_loss < freeze;
  const double steps = double(std::max<std::int64_t>(1, hyb.last_step - hyb.first_step));
  const ArmResult& h = runs.results["hybrid"][i];
  std::cout << "seed " << runs.seeds[i] << ": skip ratio "
            << io::fmt(1.0 - double(hyb.backward_passes) / steps, 3) << ", hybrid used "
            << io::fmt(100.0 * double(hyb.backward_passes) / double(full.backward_passes), 4)
            << " % of full's backward passes; val loss " << io::fmt(hyb.final_val_loss, 5)
            << " vs full " << io::fmt(full.final_val_loss, 5) << (close ? " (within 1 %)" : "")
            << ", budget " << io::fmt(budget, 5) << ", freeze " << io::fmt(freeze, 5)
            << "; to val loss " << io::fmt(h.common_loss, 5) << ": hybrid "
            << io::fmt(h.seconds_to_common, 4) << " s, full "
            << io::fmt(h.full_seconds_to_common, 4) << " s\n";
  return close && fewer && beats;
}

void print_verdicts(CompareRuns& runs) {
  int wins = 0;
  for (std::size_t i = 0; i < runs.seeds.size(); ++i) wins += seed_verdict(runs, i);
  std::cout << "saving shown (within 1 % of full, <= 60 % of its backward passes, better than "
               "budget and freeze): "
            << wins << " of " << runs.seeds.size() << " seeds\n";
}

void write_arm_group(io::H5Group g, const ArmResult& r) {
  const auto& s = r.summary;
  write_validations(g, s.validations);
  g.write_double_attribute("final_val_loss", s.final_val_loss);
  g.write_double_attribute("final_val_accuracy", s.final_val_accuracy);
  g.write_int_attribute("backward_total", s.backward_passes);
  g.write_double_attribute("wall_seconds", s.seconds);
  g.write_double_attribute("val_loss_at_hybrid_backward", r.val_at_budget);
  g.write_double_attribute("common_val_loss", r.common_loss);
  g.write_double_attribute("seconds_to_common_loss", r.seconds_to_common);
  g.write_double_attribute("full_seconds_to_common_loss", r.full_seconds_to_common);
  g.write_int_attribute("steps", s.last_step - s.first_step);
  g.write_double_attribute("seconds_steps", s.seconds_steps);
  g.write_double_attribute("seconds_encode", s.seconds_encode);
  g.write_double_attribute("seconds_checkpoints", s.seconds_checkpoints);
  g.write_double_attribute("seconds_forecaster_filter", s.seconds_filter);
  g.write_double_attribute("seconds_forecaster_training", s.seconds_train);
  g.write_double_attribute("seconds_forecaster_rollouts", s.seconds_forecast);
  for (const auto& [name, value] : s.policy_counters) g.write_double_attribute(name, value);
  io::write_communication(g, s.communication, "comm_");
}

void write_compare_file(const RunContext& ctx, CompareRuns& runs) {
  if (!Communicator::world().is_root()) return;  // data-parallel: rank 0 alone writes
  const std::string path = ctx.output_path("_compare.h5");
  io::AtomicH5Writer writer(path);
  io::H5File& f = writer.file();
  io::write_hpt_header(f, io::HptFileKind::Compare, ctx.resolved_ini);
  io::H5Group root = f.root();
  root.write_string_attribute("problem", ctx.config.get_string("dataset.style"));
  root.write_string_attribute("seeds", ctx.config.get_string("compare.seeds"));
  root.write_int_attribute("ranks", Communicator::world().size());
  root.write_double_attribute("budget_lr_factor", runs.factors[runs.chosen]);
  root.write_dataset("budget_lr_factors", io::H5Element::Float64, runs.factors.data(),
                     {runs.factors.size()});
  root.write_dataset("budget_mean_final_val_loss", io::H5Element::Float64, runs.budget_means.data(),
                     {runs.budget_means.size()});
  for (const std::string arm : kArms) {
    for (std::size_t i = 0; i < runs.seeds.size(); ++i) {
      // The first seed's arms at /arms/<arm> (the plot's view), every seed at /seeds/<seed>/<arm>.
      write_arm_group(root.create_group("seeds/" + std::to_string(runs.seeds[i]) + "/" + arm),
                      runs.results[arm][i]);
      if (i == 0) write_arm_group(root.create_group("arms/" + arm), runs.results[arm][i]);
    }
  }
  writer.commit();
  std::cout << "comparison written to " << path << "; plot it with run/post/hpt-plot " << path
            << "\n";
}

}  // namespace

int run_compare_mode(const RunContext& ctx) {
  CompareRuns runs;
  runs.seeds = seeds_of(ctx.config);
  runs.factors = budget_lr_factors_of(ctx.config);
  runs.budget_runs.resize(runs.factors.size());
  int arms_done = 0;
  for (const long seed : runs.seeds)
    if (const int stopped = run_seed(ctx, seed, runs, arms_done)) return stopped;
  choose_budget_rate(runs);
  compare_with_full(runs);
  print_compare_table(runs);
  print_verdicts(runs);
  write_compare_file(ctx, runs);
  return 0;
}

}  // namespace hpt::app
