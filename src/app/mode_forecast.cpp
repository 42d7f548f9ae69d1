#include "app/mode_forecast.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <iostream>

#include "app/gemm_probe.hpp"
#include "app/output_location.hpp"
#include "core/communicator.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "app/stop_rule_words.hpp"
#include "forecast/curve_study.hpp"
#include "forecast/forecast_options.hpp"
#include "forecast/origin_share.hpp"
#include "forecast/pretrain_options.hpp"
#include "io/console.hpp"
#include "io/curve_files.hpp"
#include "io/curve_study_file.hpp"
#include "io/dynamics_model_file.hpp"
#include "io/level_model_file.hpp"
#include "physics-style-modules/encoder/register.hpp"

namespace hpt::app {

namespace {

using forecast::CurveStudyResult;

forecast::CurveSet read_input(const Config& c) {
  const std::string path = c.get_string("forecast.input");
  if (path.empty())
    throw InputError(
        "forecast.input is empty; expected the path of an HDF5 or CSV file of loss "
        "curves");
  return io::read_curves_step_by_step(path, c.get_bool("forecast.skip_bad_runs"));
}

// The online fine-tuning learns from realised windows at every 10th entry; of a run logged every
// few steps those are mostly filled in from later losses, so the two are not combined.
void refuse_finetune_on_sparse_runs(const forecast::CurveSet& set,
                                    const forecast::CurveStudySettings& settings, const Config& c) {
  if (!settings.finetune.on) return;
  const auto sparse = std::count_if(set.runs.begin(), set.runs.end(),
                                    [](const forecast::Curve& r) { return !r.logged.empty(); });
  if (sparse > 0)
    throw InputError("forecast.finetune = on: " + std::to_string(sparse) + " runs of '" +
                     c.get_string("forecast.input") +
                     "' are logged every few steps (read step by step, the losses between logged "
                     "steps filled in); expected forecast.finetune = off for such a file");
}

void warn_skipped_runs(const forecast::CurveSet& set, const Config& c) {
  if (!Communicator::world().is_root()) return;  // every process read the same file
  for (const auto& why : set.skipped)
    std::cerr << "hpt: warning: curve file '" << c.get_string("forecast.input") << "': skipped "
              << why << "\n";
}

void print_notes(const std::vector<std::string>& notes, const Config& c) {
  for (const auto& note : notes)
    std::cout << "note: curve file '" << c.get_string("forecast.input") << "': " << note << "\n";
}

// The shared ensemble: seeded, or the parameters of forecast.model.
void prepare_dynamics(RssmDynamics& dynamics, const Config& c) {
  dynamics.initialize(std::uint64_t(c.get_int("dynamics.seed")));
  if (!c.get_string("forecast.model").empty())
    io::load_model_file(dynamics, c.get_string("forecast.model"));
}

// The learned level forecaster of forecast.pretrained, announced with where it came from.
void load_pretrained(forecast::CurveStudySettings& settings, const Config& c) {
  const std::string path = forecast::pretrained_model_path(c);
  if (path.empty()) {
    std::cout << "forecast.pretrained = none: the learned forecaster repeats last\n";
    return;
  }
  settings.level_model = io::load_level_model(path, "forecast.pretrained");
  const forecast::LevelModel& m = settings.level_model;
  std::cout << "learned level forecaster: " << path << " (pretrained on " << m.runs << " runs of '"
            << m.corpus << "', " << m.samples << " samples)\n";
  const std::string sparse_path = forecast::sparse_model_path(c);
  if (!sparse_path.empty()) {
    settings.sparse_model = io::load_level_model(sparse_path, "forecast.pretrained_sparse");
    std::cout << "learned level forecaster of the runs logged every few steps: " << sparse_path
              << " (pretrained on " << settings.sparse_model.runs << " runs, "
              << settings.sparse_model.samples << " samples)\n";
  }
  const std::string final_path = forecast::final_model_path(c);
  if (final_path.empty()) return;
  settings.final_model =
      io::load_level_model(final_path, "forecast.final_model", forecast::LevelModel::Target::kEnd);
  std::cout << "final-level forecaster of the stop list: " << final_path << " (pretrained on "
            << settings.final_model.runs << " runs, " << settings.final_model.samples
            << " samples)\n";
}

double eta_seconds(const forecast::ReplayProgress& p) {
  return p.seconds / double(p.walked) * double(p.steps - p.walked);
}

void print_progress(const forecast::ReplayProgress& p) {
  std::cout << "step " << p.step << "  (" << p.walked << "/" << p.steps << " steps)  "
            << io::fmt(double(p.run_steps) / std::max(p.seconds, 1e-9)) << " run-steps/s  ETA "
            << io::fmt(eta_seconds(p)) << " s" << std::endl;
}

// Once the replay has run a few seconds, the rate measured so far says whether the requested work
// is far beyond an hour of this machine: warn once, naming the keys that set its size.
class WorkEstimate {
 public:
  explicit WorkEstimate(const Config& c) : c_(c) {}
  void operator()(const forecast::ReplayProgress& p) {
    print_progress(p);
    if (warned_ || p.seconds < 2 || p.walked == p.steps || !Communicator::world().is_root()) return;
    warned_ = true;
    if (eta_seconds(p) < kHour) return;
    std::cerr << "hpt: warning: at the rate measured so far this forecast needs about "
              << io::fmt(eta_seconds(p) / kHour) << " h more; its size is set by "
              << "forecast.input (" << p.run_steps
              << " run-steps so far), forecast.scenarios = " << c_.get_int("forecast.scenarios")
              << ", forecast.horizons = " << c_.get_string("forecast.horizons")
              << ", forecast.every = " << c_.get_int("forecast.every")
              << " and dynamics.hidden = " << c_.get_int("dynamics.hidden") << "\n";
  }

 private:
  static constexpr double kHour = 3600;
  const Config& c_;
  bool warned_ = false;
};

// Mean |error| and coverage of every forecaster per horizon.
io::TextTable scores_table(const CurveStudyResult& result) {
  const forecast::HorizonScores& s = result.scores;
  io::TextTable table(
      {"horizon", "forecaster", "targets", "mean |error| log L", "90% coverage", "90% width"});
  for (int k = 0; k < s.horizons; ++k)
    for (int fi = 0; fi < forecast::kForecasters; ++fi)
      table.add_row({std::to_string(result.horizons[std::size_t(k)]),
                     forecast::kForecasterNames[fi], std::to_string(s.targets[s.at(fi, k)]),
                     io::fmt(s.mean_error[s.at(fi, k)]), io::fmt(s.coverage[s.at(fi, k)]),
                     io::fmt(s.mean_width[s.at(fi, k)])});
  return table;
}

// hpt's forecast per horizon (the combined forecast: docs/method.md#combined-forecast) against the
// best simple forecaster there (last, loglin, power or the law, by pooled mean |error|).
io::TextTable headline_table(const CurveStudyResult& result) {
  const forecast::HorizonScores& s = result.scores;
  constexpr int kCombined = 1 + forecast::kCombinedSlot;
  io::TextTable table({"horizon", "hpt (combined)", "best simple", "its mean |error|",
                       "hpt / best simple", "hpt 90% coverage", "hpt 90% width", "its 90% width"});
  for (int k = 0; k < s.horizons; ++k) {
    int best = 1;
    for (int fi = 2; fi <= 1 + forecast::kLawSlot; ++fi)
      if (s.mean_error[s.at(fi, k)] < s.mean_error[s.at(best, k)]) best = fi;
    const double hpt = s.mean_error[s.at(kCombined, k)], simple = s.mean_error[s.at(best, k)];
    table.add_row({std::to_string(result.horizons[std::size_t(k)]), io::fmt(hpt),
                   forecast::kForecasterNames[best], io::fmt(simple), io::fmt(hpt / simple),
                   io::fmt(s.coverage[s.at(kCombined, k)]),
                   io::fmt(s.mean_width[s.at(kCombined, k)]),
                   io::fmt(s.mean_width[s.at(best, k)])});
  }
  return table;
}

// The validation forecasts' scores per horizon (empty when no run has validation losses).
std::string validation_table(const CurveStudyResult& result) {
  const forecast::ValidationScores& v = result.validation_scores;
  long total = 0;
  for (long n : v.targets) total += n;
  if (total == 0) return "";
  io::TextTable table({"horizon", "validation points", "mean |error| last val",
                       "mean |error| learned val", "90% coverage"});
  for (std::size_t k = 0; k < v.targets.size(); ++k)
    table.add_row({std::to_string(result.horizons[k]), std::to_string(v.targets[k]),
                   io::fmt(v.last_error[k]), io::fmt(v.learned_error[k]), io::fmt(v.coverage[k])});
  return "validation loss (first validation point at or after each horizon; last val: the log "
         "mean of the newest 3):\n" +
         table.str();
}

// What stopped one run, in words.
std::string stop_evidence_words(forecast::StopRule rule, const forecast::StopEvidence& e) {
  if (rule == forecast::StopRule::kBoth)
    return "forecast final " + io::fmt(e.final_mid) + " above " + io::fmt(e.others_final_quantile) +
           ", level " + io::fmt(e.level) + " above " + io::fmt(e.others_level_quantile);
  return "P " + io::fmt(e.beat_probability) + ", forecast final " + io::fmt(e.final_mid) +
         " against the others' median " + io::fmt(e.others_median);
}

// The sizes, the scores per horizon and the stop list.
void print_summary(const CurveStudyResult& result, const std::vector<forecast::Curve>& runs,
                   const RssmDynamics& dynamics, const forecast::CurveStudySettings& settings) {
  const int R = int(runs.size()), K = int(result.horizons.size());
  const forecast::StopList& s = result.stop;
  std::cout << "\nforecast: " << R << " runs, " << result.steps << " steps, "
            << result.rows.size() / std::size_t(std::max(K, 1)) << " run-origins x " << K
            << " horizons (";
  if (settings.ensemble)
    std::cout << dynamics.members() << " members x " << settings.scenarios << " scenarios, H "
              << dynamics.hidden() << "); the ensemble learned online: " << result.training_updates
              << " BPTT updates (" << settings.train_runs << " runs per step)\n";
  else
    std::cout << "forecast.ensemble = off: no hpt column)\n";
  if (settings.finetune.on)
    std::cout << "learned level forecaster fine-tuned online: " << result.finetune_refits
              << " group refits every " << settings.finetune.every << " steps on "
              << result.finetune_samples << " realised samples in all (forecast.finetune_strength "
              << io::fmt(settings.finetune.strength) << ")\n";
  std::cout << scores_table(result).str()
            << "coverage: hpt after the adaptive conformal correction; baselines "
            << "from the 5/95 % quantiles of their own past errors (once 10 are known)\n"
            << "hpt's forecast: combined, "
            << (settings.level_model.empty()
                    ? "last guarded run by run by loglin and power"
                    : "the learned level forecast guarded run by run by last, loglin and power")
            << " (the hpt row above is the RSSM ensemble alone)\n"
            << headline_table(result).str() << validation_table(result) << "stop list at "
            << io::fmt(s.stop_at) << " of each run: " << s.stopped_count << " of " << R
            << " runs stopped (" << stop_rule_words(s.rule, s.below_probability, s.quantile)
            << "), saving " << s.total_steps_saved << " of " << result.timings.run_steps
            << " run-steps; the eventually best run of every group "
            << (s.best_run_kept ? "kept" : "NOT kept (one was STOPPED)") << " (best of all: '"
            << runs[std::size_t(s.best_run)].id << "')\n";
  for (int r = 0; r < R; ++r)
    if (s.stopped[std::size_t(r)])
      std::cout << "  stop '" << runs[std::size_t(r)].id << "' at step "
                << s.stop_origin[std::size_t(r)] << " ("
                << stop_evidence_words(s.rule, s.judged[std::size_t(r)]) << ", saves "
                << s.steps_saved[std::size_t(r)] << " steps)\n";
}

// The rollouts' work against this machine's GEMM rate: their GRU and head products as one GEMM of
// the same shape (3H x (H + I) times the H + I rows of every active path).
double measure_rollout_gemm(const CurveStudyResult& result, const RssmDynamics& dynamics) {
  return measure_gemm_gflops(
      3 * dynamics.hidden(),
      std::max(1, int(std::min<long long>(result.timings.rollout_paths, 1 << 16))),
      dynamics.hidden() + dynamics.input());
}

// Over several processes: how the runs were divided, and what gathering the forecasts cost (rank
// 0's seconds; the same calls and bytes on every process).
void print_processes(const Communicator& comm, int runs) {
  if (comm.size() == 1) return;
  std::cout << "processes: " << comm.size() << ", each forecasts a block of the " << runs
            << " runs (";
  for (int p = 0; p < comm.size(); ++p) {
    const forecast::RunBlock b = forecast::run_block(runs, p, comm.size());
    std::cout << (p ? ", " : "") << b.end - b.first;
  }
  const CollectiveCount& c = comm.counters()[Traffic::Evaluation];
  std::cout << " runs) and every origin's forecasts are gathered on all: "
            << io::fmt(double(c.bytes) / 1e6, 4) << " MB in " << c.calls << " calls, "
            << io::fmt(c.seconds, 4) << " s\n";
}

void print_rates(const CurveStudyResult& result, double gemm_gflops) {
  const forecast::CurveStudyTimings& t = result.timings;
  if (t.member_steps > 0)
    std::cout << "rollouts: " << io::fmt(t.member_steps_per_second()) << " member-steps/s, "
              << io::fmt(result.rollout_gflops) << " GFLOP/s = "
              << io::fmt(100.0 * result.rollout_gflops / std::max(gemm_gflops, 1e-9))
              << " % of this machine's GEMM rate measured now (" << io::fmt(gemm_gflops)
              << " GFLOP/s)\n";
  std::cout << "throughput: " << io::fmt(t.run_steps_per_second()) << " run-steps/s ("
            << io::fmt(t.seconds) << " s, of which forecasts " << io::fmt(t.forecast_seconds)
            << " s, online training " << io::fmt(t.train_seconds) << " s, fine-tuning "
            << io::fmt(t.finetune_seconds) << " s)\n";
}

// Every level model file the deck names loads, and each is used where it can be.
void check_level_models(const Config& c) {
  const std::string pretrained = forecast::pretrained_model_path(c);
  if (!pretrained.empty()) io::load_level_model(pretrained, "forecast.pretrained");
  const std::string sparse = forecast::sparse_model_path(c);
  if (!sparse.empty()) {
    if (pretrained.empty())
      throw InputError("forecast.pretrained_sparse = '" +
                       c.get_string("forecast.pretrained_sparse") +
                       "': a model for the sparse runs needs a forecast.pretrained model for the "
                       "others; expected forecast.pretrained_sparse = none here");
    io::load_level_model(sparse, "forecast.pretrained_sparse");
  }
  const std::string final_model = forecast::final_model_path(c);
  if (!final_model.empty()) {
    if (pretrained.empty() || c.get_string("forecast.stop_by") != "learned")
      throw InputError("forecast.final_model = '" + c.get_string("forecast.final_model") +
                       "': the stop list forecasts final levels only with forecast.stop_by = "
                       "learned and a forecast.pretrained model; expected forecast.final_model = "
                       "none here");
    io::load_level_model(final_model, "forecast.final_model", forecast::LevelModel::Target::kEnd);
  }
}

}  // namespace

void check_forecast_inputs(const RunContext& ctx) {
  forecast::CurveStudySettings settings = forecast::read_curve_study_settings(ctx.config);
  const forecast::CurveSet set = read_input(ctx.config);  // every run validated before any output
  refuse_finetune_on_sparse_runs(set, settings, ctx.config);
  std::vector<std::string> notes;
  forecast::fit_horizons_to_runs(settings, set, notes);
  forecast::check_stop_level(settings, set);
  const std::string model = ctx.config.get_string("forecast.model");
  if (!model.empty()) io::check_model_file(model, "forecast.model", ctx.config);
  check_level_models(ctx.config);
  check_output_file(ctx.output_path(".h5"), "output.name", ctx.output_dir);
  check_output_not_input(ctx.output_path(".h5"), {ctx.config.get_string("forecast.input")},
                         "forecast.input");
}

int run_forecast_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  forecast::CurveStudySettings settings = forecast::read_curve_study_settings(c);
  const forecast::CurveSet set = read_input(c);
  warn_skipped_runs(set, c);
  std::vector<std::string> notes = set.notes;
  forecast::fit_horizons_to_runs(settings, set, notes);
  forecast::check_stop_level(settings, set);
  print_notes(notes, c);
  load_pretrained(settings, c);

  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  auto encoder = encoders.create(c.get_string("encoder.style"), c);
  RssmDynamics dynamics(c);
  prepare_dynamics(dynamics, c);
  const Communicator world = Communicator::world();
  forecast::CurveStudy study(set.runs, settings, dynamics, *encoder, world);
  const CurveStudyResult result = study.run(WorkEstimate(c));

  print_summary(result, set.runs, dynamics, settings);
  // Rank 0 alone measures (it alone writes the rate), so that no other process competes for cores.
  const double gemm_gflops =
      settings.ensemble && world.is_root() ? measure_rollout_gemm(result, dynamics) : 0.0;
  print_processes(world, int(set.runs.size()));
  print_rates(result, gemm_gflops);
  if (!world.is_root()) return 0;  // every process holds the result; rank 0 alone writes it
  const std::string path = ctx.output_path(".h5");
  io::write_curve_study_file(path, ctx.resolved_ini, set.runs, result, gemm_gflops);
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace hpt::app
