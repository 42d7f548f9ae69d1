#include "app/mode_forecast.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <map>

#include "app/deck_lists.hpp"
#include "app/gemm_probe.hpp"
#include "app/model_file.hpp"
#include "app/output_location.hpp"
#include "core/error.hpp"
#include "core/registry.hpp"
#include "forecast/adaptive_conformal.hpp"
#include "forecast/baselines.hpp"
#include "forecast/curve_forecaster.hpp"
#include "modules/dynamics/rssm_online.hpp"
#include "io/atomic_file.hpp"
#include "io/console.hpp"
#include "io/curve_files.hpp"
#include "io/hdf5_format.hpp"
#include "modules/encoder/register.hpp"

namespace hpt::app {

namespace {

using forecast::kTargetAfter;
using forecast::kTargetBefore;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kMinOriginEntries = 10;  // a run is forecast once it has this many steps
constexpr int kBaselines = 3;
const char* const kBaselineNames[kBaselines] = {"last", "loglin", "power"};

io::CurveSet read_input(const Config& c) {
  const std::string path = c.get_string("forecast.input");
  if (path.empty())
    throw InputError(
        "forecast.input is empty; expected the path of an HDF5 or CSV file of loss "
        "curves");
  return io::read_curves(path, c.get_bool("forecast.skip_bad_runs"));
}

// Index of the newest entry with step <= t (or -1).
int entries_upto(const io::Curve& c, long long t) {
  return int(std::upper_bound(c.steps.begin(), c.steps.end(), t) - c.steps.begin());
}

// One scored forecast (run, origin, horizon) of hpt and the baselines.
struct Row {
  int run = 0;
  long long origin = 0;
  int k = 0;
  double mean = kNaN, q05 = kNaN, q50 = kNaN, q95 = kNaN, raw_q05 = kNaN, raw_q95 = kNaN;
  double target = kNaN;
  int inside = -1;  // -1: target unknown
  double base[kBaselines] = {kNaN, kNaN, kNaN};
  double base_lo[kBaselines] = {kNaN, kNaN, kNaN}, base_hi[kBaselines] = {kNaN, kNaN, kNaN};
  int base_inside[kBaselines] = {-1, -1, -1};  // -1: target or interval unknown
};

struct OriginRow {
  int run = 0;
  long long origin = 0;
  double best_other = kNaN;  // best (lowest) current log loss of the other runs at the origin
  double beat_probability = kNaN;
};

}  // namespace

std::vector<int> parse_horizons(const Config& c) {
  const auto list = parse_positive_list(c.get_string("forecast.horizons"), "forecast.horizons");
  std::vector<int> h;
  for (long v : list) {
    if (v < kTargetBefore + 1 || v > 100000)
      throw InputError("forecast.horizons = '" + c.get_string("forecast.horizons") + "': horizon " +
                       std::to_string(v) +
                       " is out of range; expected steps in [5, 100000] (the target window starts "
                       "4 steps before the horizon)");
    if (!h.empty() && v <= h.back())
      throw InputError("forecast.horizons = '" + c.get_string("forecast.horizons") +
                       "': horizons must increase");
    h.push_back(int(v));
  }
  return h;
}

void declare_forecast_options(OptionSchema& s) {
  s.add_string("forecast.input", "",
               "loss curves to forecast: HDF5 (/runs/<id>/step, loss[, grad_norm, lr, val_loss]) "
               "or CSV with the header run,step,loss[,grad_norm,lr]");
  s.add_bool("forecast.skip_bad_runs", false,
             "skip a malformed run with a warning instead of refusing the file");
  s.add_string("forecast.horizons", "10,50,100,200",
               "forecast horizons in steps (>= 5, increasing)");
  s.add_int("forecast.every", 10, "origin spacing: a forecast at every step divisible by this", 1,
            1000000);
  s.add_int("forecast.scenarios", 32, "rollout samples per ensemble member and run", 1, 1 << 16);
  s.add_real("forecast.stop_at", 0.25, "fraction of a run's steps at which the stop list judges it",
             0.0, 1.0);
  s.add_real("forecast.stop_confidence", 0.9,
             "a run is stopped when it beats the best other run with probability below 1 - this",
             0.5, 1.0);
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
}

void check_forecast_inputs(const RunContext& ctx) {
  parse_horizons(ctx.config);
  read_input(ctx.config);  // every run validated before any output
  const std::string model = ctx.config.get_string("forecast.model");
  if (!model.empty()) check_model_file(model, "forecast.model", ctx.config);
  check_output_file(ctx.output_path(".h5"), "output.name", ctx.output_dir);
}

int run_forecast_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  Kokkos::Profiling::pushRegion("hpt::forecast_mode");
  const std::vector<int> horizons = parse_horizons(c);
  const io::CurveSet set = read_input(c);
  for (const auto& why : set.skipped)
    std::cerr << "hpt: warning: curve file '" << c.get_string("forecast.input") << "': skipped "
              << why << "\n";
  const std::vector<io::Curve>& runs = set.runs;
  const int R = int(runs.size()), K = int(horizons.size());
  const long long every = c.get_int("forecast.every");

  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  auto encoder = encoders.create(c.get_string("encoder.style"), c);
  RssmDynamics dynamics(c);
  dynamics.initialize(std::uint64_t(c.get_int("dynamics.seed")));
  if (!c.get_string("forecast.model").empty())
    load_model_file(dynamics, c.get_string("forecast.model"));
  const int train_runs = int(c.get_int("forecast.train_runs"));
  forecast::RssmCurveForecaster forecaster(dynamics, R, int(c.get_int("forecast.scenarios")),
                                           horizons, std::uint64_t(c.get_int("run.seed")),
                                           encoder->feature_update(), encoder->clamp(),
                                           rssm_train_options_from_config(c), train_runs);
  forecast::AdaptiveConformal calibration(
      K, forecast::calibration_rule(c.get_string("forecast.calibration")), 0.90,
      c.get_real("forecast.calibration_rate"), int(c.get_int("forecast.calibration_window")));
  std::vector<forecast::EmpiricalErrors> base_errors(std::size_t(kBaselines * K));

  auto history = encoder->create_history(R);
  forecast::CurveState state;
  state.features = View2<real>("hpt::forecast_features", R, kFeatures);
  state.loss_states = View1<LossState<real>>("hpt::forecast_loss_states", R);
  state.active = View1<int>("hpt::forecast_active", R);
  state.log_loss = View1<real>("hpt::forecast_log_loss", R);
  state.active_host.assign(std::size_t(R), 0);
  auto host_log_loss = Kokkos::create_mirror_view(state.log_loss);
  View1<int> origin_active("hpt::forecast_origin_active", R);
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> records("hpt::forecast_records", R);
  auto host_records = Kokkos::create_mirror_view(records);
  auto host_active = Kokkos::create_mirror_view(state.active);
  auto host_origin = Kokkos::create_mirror_view(origin_active);

  // Every step of any run, in order: all runs walk forward together.
  std::vector<long long> grid;
  for (const auto& run : runs) grid.insert(grid.end(), run.steps.begin(), run.steps.end());
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());

  std::vector<Row> rows;
  std::vector<OriginRow> origins;
  std::multimap<long long, std::size_t> due;  // step at which a row's target is known -> row
  std::vector<int> next(std::size_t(R), 0);   // entries of run r pushed so far
  auto current_log_loss = [&](int r) {        // log mean of the newest 10 losses pushed
    const int n = next[std::size_t(r)];
    return n == 0 ? kNaN : forecast::forecast_last(runs[std::size_t(r)].loss, n);
  };
  long long run_steps = 0;
  double forecast_seconds = 0, train_seconds = 0, member_steps = 0;
  long long rollout_paths = 0;

  Kokkos::fence();
  Kokkos::Timer timer;
  const std::size_t print_every = std::size_t(c.get_int("run.print_every"));
  std::size_t walked = 0;
  for (const long long g : grid) {
    // 1. Push the record of every run that has this step, encode, filter the latents.
    for (int r = 0; r < R; ++r) {
      const io::Curve& run = runs[std::size_t(r)];
      const int i = next[std::size_t(r)];
      TelemetryRecord rec;
      rec.active = i < int(run.steps.size()) && run.steps[std::size_t(i)] == g;
      if (rec.active) {
        rec.step = g;
        rec.phase = telemetry::kFull;
        rec.steps_in_phase = i;
        rec.has_loss = true;
        rec.loss = run.loss[std::size_t(i)];
        rec.has_grad = !run.grad_norm.empty();
        rec.grad_norm = rec.has_grad ? run.grad_norm[std::size_t(i)] : 0.0;
        rec.lr = run.lr.empty() ? 0.0 : run.lr[std::size_t(i)];
        rec.effective_lr = rec.lr;
        rec.has_val_loss = !run.val_loss.empty() && !std::isnan(run.val_loss[std::size_t(i)]);
        rec.val_loss = rec.has_val_loss ? run.val_loss[std::size_t(i)] : 0.0;
        next[std::size_t(r)] = i + 1;
        ++run_steps;
      }
      host_records(r) = rec;
      host_active(r) = rec.active ? 1 : 0;
      state.active_host[std::size_t(r)] = host_active(r);
      host_log_loss(r) = rec.active ? real(std::log(std::max(rec.loss, forecast::kMinLoss))) : 0;
    }
    Kokkos::deep_copy(records, host_records);
    Kokkos::deep_copy(state.active, host_active);
    Kokkos::deep_copy(state.log_loss, host_log_loss);
    push_records(ExecSpace(), history, View1<const TelemetryRecord>(records));
    encoder->encode(history, state.features);
    forecaster.observe(state);
    Kokkos::Timer train_timer;
    forecaster.train();  // the shared ensemble learns from the runs' newest transitions
    Kokkos::fence();
    train_seconds += train_timer.seconds();
    if (++walked % print_every == 0 || walked == grid.size()) {
      const double now = timer.seconds();
      std::cout << "step " << g << "  (" << walked << "/" << grid.size() << " steps)  "
                << io::fmt(double(run_steps) / std::max(now, 1e-9)) << " run-steps/s  ETA "
                << io::fmt(now / double(walked) * double(grid.size() - walked)) << " s"
                << std::endl;
    }

    // 2. Targets that became known with this step: score them, update the calibration and the
    //    baselines' error records (in the order the forecasts were made).
    std::vector<std::vector<char>> batch_inside(static_cast<std::size_t>(K));
    std::vector<std::vector<double>> batch_scores(static_cast<std::size_t>(K));
    for (auto it = due.begin(); it != due.end() && it->first <= g; it = due.erase(it)) {
      Row& row = rows[it->second];
      row.inside = (row.target >= row.q05 && row.target <= row.q95) ? 1 : 0;
      batch_inside[std::size_t(row.k)].push_back(char(row.inside));
      batch_scores[std::size_t(row.k)].push_back(
          forecast::conformal_score(row.target, row.raw_q05, row.q50, row.raw_q95));
      for (int b = 0; b < kBaselines; ++b) {
        if (!std::isnan(row.base_lo[b]))
          row.base_inside[b] = (row.target >= row.base_lo[b] && row.target <= row.base_hi[b]);
        base_errors[std::size_t(b * K + row.k)].add(row.target - row.base[b]);
      }
    }
    for (int k = 0; k < K; ++k)
      calibration.update_batch(k, batch_inside[std::size_t(k)], batch_scores[std::size_t(k)]);

    // 3. Origins: every active run with enough history, at steps divisible by forecast.every.
    if (g % every != 0) continue;
    int origin_runs = 0;
    for (int r = 0; r < R; ++r) {
      host_origin(r) = host_active(r) && next[std::size_t(r)] >= kMinOriginEntries;
      origin_runs += host_origin(r);
    }
    if (origin_runs == 0) continue;
    Kokkos::deep_copy(origin_active, host_origin);
    encoder->extract_loss_state(history, state.loss_states);
    const Encoder::Normalizer* norm = encoder->normalizer();
    state.norm_mean = norm ? norm->center : View2<real>("hpt::no_norm", R, kFeatures);
    state.norm_inv_std = norm ? norm->inv_std : state.norm_mean;
    forecast::CurveState at_origin = state;
    at_origin.active = origin_active;
    Kokkos::Timer forecast_timer;
    const forecast::CurveForecast f = forecaster.forecast(at_origin);
    forecast_seconds += forecast_timer.seconds();
    member_steps += forecaster.member_steps_per_forecast(origin_runs);
    rollout_paths = std::max<long long>(
        rollout_paths,
        (long long)origin_runs * c.get_int("forecast.scenarios") * dynamics.members());

    for (int r = 0; r < R; ++r) {
      if (!host_origin(r)) continue;
      const io::Curve& run = runs[std::size_t(r)];
      const int n = next[std::size_t(r)];
      for (int k = 0; k < K; ++k) {
        const int h = horizons[std::size_t(k)];
        const std::size_t at = std::size_t(r * K + k);
        Row row;
        row.run = r;
        row.origin = g;
        row.k = k;
        row.mean = f.mean[at];
        row.raw_q05 = f.q05[at];
        row.raw_q95 = f.q95[at];
        const auto iv = calibration.apply(k, f.q05[at], f.q50[at], f.q95[at]);
        row.q05 = iv.lo;
        row.q50 = iv.mid;
        row.q95 = iv.hi;
        row.base[0] = forecast::forecast_last(run.loss, n);
        row.base[1] = forecast::forecast_loglin(run.steps, run.loss, n, h);
        row.base[2] = forecast::forecast_power(run.steps, run.loss, n, h);
        for (int b = 0; b < kBaselines; ++b) {
          const auto& e = base_errors[std::size_t(b * K + k)];
          row.base_lo[b] = row.base[b] + e.quantile(0.05);
          row.base_hi[b] = row.base[b] + e.quantile(0.95);
        }
        row.target = forecast::target_log_loss(run.steps, run.loss, g, h);
        if (!std::isnan(row.target)) due.emplace(g + h + kTargetAfter, rows.size());
        rows.push_back(row);
      }
      // Probability of beating the best other run: the fraction of the calibrated sample paths of
      // the largest horizon below the lowest current log loss (mean of the newest 10) of the
      // other runs.
      OriginRow o;
      o.run = r;
      o.origin = g;
      for (int q = 0; q < R; ++q)
        if (q != r && next[std::size_t(q)] > 0)
          o.best_other = std::isnan(o.best_other) ? current_log_loss(q)
                                                  : std::min(o.best_other, current_log_loss(q));
      if (!std::isnan(o.best_other)) {
        const std::size_t at = std::size_t(r * K + K - 1);
        const double w = calibration.width_factor(K - 1), mid = f.q50[at];
        int below = 0;
        for (int p = 0; p < f.paths; ++p) {
          const double l = f.paths_last[std::size_t(r) * std::size_t(f.paths) + std::size_t(p)];
          below += (mid + w * (l - mid)) < o.best_other;
        }
        o.beat_probability = double(below) / double(f.paths);
      }
      origins.push_back(o);
    }
  }
  Kokkos::fence();
  const double seconds = timer.seconds();
  Kokkos::Profiling::popRegion();

  // ---------------------------------------------------------------- scores per horizon
  // Errors of every forecaster over the rows whose target is known; coverage over those whose
  // interval is defined too (hpt: always; baselines: from their 10th realised error on).
  const int F = 1 + kBaselines;
  std::vector<double> err_sum(std::size_t(F * K), 0), cov_in(std::size_t(F * K), 0);
  std::vector<long> err_n(std::size_t(F * K), 0), cov_n(std::size_t(F * K), 0);
  for (const Row& row : rows) {
    if (std::isnan(row.target)) continue;
    for (int fi = 0; fi < F; ++fi) {
      const double point = fi == 0 ? row.mean : row.base[fi - 1];
      const int inside = fi == 0 ? row.inside : row.base_inside[fi - 1];
      const std::size_t at = std::size_t(fi * K + row.k);
      err_sum[at] += std::fabs(point - row.target);
      err_n[at] += 1;
      if (inside >= 0) {
        cov_in[at] += inside;
        cov_n[at] += 1;
      }
    }
  }
  auto mean_error = [&](int fi, int k) {
    const std::size_t at = std::size_t(fi * K + k);
    return err_n[at] ? err_sum[at] / double(err_n[at]) : kNaN;
  };
  auto coverage = [&](int fi, int k) {
    const std::size_t at = std::size_t(fi * K + k);
    return cov_n[at] ? cov_in[at] / double(cov_n[at]) : kNaN;
  };
  const char* const forecaster_names[] = {"hpt", "last", "loglin", "power"};
  io::TextTable table({"horizon", "forecaster", "targets", "mean |error| log L", "90% coverage"});
  for (int k = 0; k < K; ++k)
    for (int fi = 0; fi < F; ++fi)
      table.add_row({std::to_string(horizons[std::size_t(k)]), forecaster_names[fi],
                     std::to_string(err_n[std::size_t(fi * K + k)]), io::fmt(mean_error(fi, k)),
                     io::fmt(coverage(fi, k))});

  // ---------------------------------------------------------------- stop list
  // Run r is judged at its latest origin at or before entry stop_at * length; it is stopped when
  // its probability of beating the best other run is below 1 - stop_confidence.
  const double stop_at = c.get_real("forecast.stop_at");
  const double stop_below = 1.0 - c.get_real("forecast.stop_confidence");
  std::vector<double> final_log(static_cast<std::size_t>(R)), latest_beat(std::size_t(R), kNaN);
  std::vector<long long> stop_origin(std::size_t(R), -1), saved(std::size_t(R), 0);
  std::vector<int> stopped(std::size_t(R), 0);
  std::vector<double> stop_probability(std::size_t(R), kNaN);
  int best = 0;
  for (int r = 0; r < R; ++r) {
    const io::Curve& run = runs[std::size_t(r)];
    final_log[std::size_t(r)] = forecast::forecast_last(run.loss, int(run.loss.size()));
    if (final_log[std::size_t(r)] < final_log[std::size_t(best)]) best = r;
    const int judge_entries = std::max(1, int(std::floor(stop_at * double(run.steps.size()))));
    const long long judge_step = run.steps[std::size_t(judge_entries - 1)];
    for (const OriginRow& o : origins) {
      if (o.run != r) continue;
      latest_beat[std::size_t(r)] = o.beat_probability;
      if (o.origin <= judge_step) {
        stop_origin[std::size_t(r)] = o.origin;
        stop_probability[std::size_t(r)] = o.beat_probability;
      }
    }
    if (stop_origin[std::size_t(r)] >= 0 && stop_probability[std::size_t(r)] < stop_below) {
      stopped[std::size_t(r)] = 1;
      saved[std::size_t(r)] =
          run.steps.size() - std::size_t(entries_upto(run, stop_origin[std::size_t(r)]));
    }
  }
  long long total_saved = 0, stopped_count = 0;
  for (int r = 0; r < R; ++r) {
    total_saved += saved[std::size_t(r)];
    stopped_count += stopped[std::size_t(r)];
  }
  const bool best_kept = stopped[std::size_t(best)] == 0;

  std::cout << "\nforecast: " << R << " runs, " << grid.size() << " steps, "
            << rows.size() / std::size_t(std::max(K, 1)) << " run-origins x " << K << " horizons ("
            << dynamics.members() << " members x " << c.get_int("forecast.scenarios")
            << " scenarios, H " << dynamics.hidden()
            << "); the ensemble learned online: " << forecaster.updates() << " BPTT updates ("
            << train_runs << " runs per step)\n"
            << table.str() << "coverage: hpt after the adaptive conformal correction; baselines "
            << "from the 5/95 % quantiles of their own past errors (once 10 are known)\n"
            << "stop list at " << io::fmt(stop_at) << " of each run: " << stopped_count << " of "
            << R << " runs stopped (P(beat best other) < " << io::fmt(stop_below) << "), saving "
            << total_saved << " of " << run_steps << " run-steps; eventually best run '"
            << runs[std::size_t(best)].id << "' " << (best_kept ? "kept" : "STOPPED") << "\n";
  for (int r = 0; r < R; ++r)
    if (stopped[std::size_t(r)])
      std::cout << "  stop '" << runs[std::size_t(r)].id << "' at step "
                << stop_origin[std::size_t(r)] << " (P "
                << io::fmt(stop_probability[std::size_t(r)]) << ", saves " << saved[std::size_t(r)]
                << " steps)\n";
  // The rollouts' work against this machine's GEMM rate: their GRU and head products as one GEMM
  // of the same shape (3H x (H + I) times the H + I rows of every active path).
  const double gemm_gflops = measure_gemm_gflops(
      3 * dynamics.hidden(), std::max(1, int(std::min<long long>(rollout_paths, 1 << 16))),
      dynamics.hidden() + dynamics.input());
  const double rollout_gflops =
      forecast_seconds > 0 ? member_steps *
                                 rollout_flops_per_member_step(dynamics.hidden(), dynamics.input(),
                                                               dynamics.stochastic()) /
                                 forecast_seconds * 1e-9
                           : 0.0;
  std::cout << "rollouts: " << io::fmt(member_steps / std::max(forecast_seconds, 1e-9))
            << " member-steps/s, " << io::fmt(rollout_gflops)
            << " GFLOP/s = " << io::fmt(100.0 * rollout_gflops / std::max(gemm_gflops, 1e-9))
            << " % of this machine's GEMM rate measured now (" << io::fmt(gemm_gflops)
            << " GFLOP/s)\n";
  std::cout << "throughput: " << io::fmt(seconds > 0 ? double(run_steps) / seconds : 0.0)
            << " run-steps/s (" << io::fmt(seconds) << " s, of which forecasts "
            << io::fmt(forecast_seconds) << " s, online training " << io::fmt(train_seconds)
            << " s)\n";

  // ---------------------------------------------------------------- output file
  const std::string path = ctx.output_path(".h5");
  {
    io::AtomicH5Writer writer(path);
    io::H5File& file = writer.file();
    io::write_hpt_header(file, io::HptFileKind::Forecast, ctx.resolved_ini);
    io::H5Group root = file.root();
    root.write_vector_attribute("horizons", horizons);
    root.write_int_attribute("runs", R);
    root.write_int_attribute("every", every);
    root.write_double_attribute("seconds", seconds);
    root.write_double_attribute("run_steps_per_second", seconds > 0 ? run_steps / seconds : 0.0);
    root.write_string_attribute("training",
                                "online: truncated BPTT (dynamics.bptt) on the newest window of " +
                                    std::to_string(train_runs) +
                                    " runs per step, round robin, one Adam step each");
    root.write_int_attribute("training_updates", forecaster.updates());
    root.write_double_attribute("rollout_member_steps_per_second",
                                member_steps / std::max(forecast_seconds, 1e-9));
    root.write_double_attribute("rollout_gflops", rollout_gflops);
    root.write_double_attribute("gemm_gflops", gemm_gflops);
    root.write_string_attribute(
        "beat_probability_method",
        "fraction of the calibrated sample paths (largest horizon) below the best other run's "
        "current log loss (log mean of its newest 10 losses)");
    root.write_string_attribute(
        "baseline_interval_method",
        "forecast + empirical 5/95 % quantiles of the baseline's earlier realised signed errors "
        "(target - forecast) at that horizon over all runs; NaN (inside = -1) before 10 are known");
    const std::size_t n = rows.size();
    auto column = [&](auto get) {
      std::vector<double> v(n);
      for (std::size_t i = 0; i < n; ++i) v[i] = get(rows[i]);
      return v;
    };
    auto write_doubles = [](io::H5Group& g, const std::string& name, const std::vector<double>& v) {
      g.write_dataset(name, io::H5Element::Float64, v.data(), {v.size()});
    };
    auto write_ints = [](io::H5Group& g, const std::string& name, const std::vector<int>& v) {
      g.write_dataset(name, io::H5Element::Int32, v.data(), {v.size()});
    };
    auto write_int64 = [](io::H5Group& g, const std::string& name,
                          const std::vector<std::int64_t>& v) {
      g.write_dataset(name, io::H5Element::Int64, v.data(), {v.size()});
    };
    io::H5Group fg = root.create_group("forecasts");
    {
      std::vector<int> run(n), horizon(n), inside(n);
      std::vector<std::int64_t> origin(n);
      for (std::size_t i = 0; i < n; ++i) {
        run[i] = rows[i].run;
        horizon[i] = horizons[std::size_t(rows[i].k)];
        inside[i] = rows[i].inside;
        origin[i] = rows[i].origin;
      }
      write_ints(fg, "run", run);
      write_int64(fg, "origin", origin);
      write_ints(fg, "horizon", horizon);
      write_ints(fg, "inside", inside);
    }
    write_doubles(fg, "mean", column([](const Row& r) { return r.mean; }));
    write_doubles(fg, "q05", column([](const Row& r) { return r.q05; }));
    write_doubles(fg, "q50", column([](const Row& r) { return r.q50; }));
    write_doubles(fg, "q95", column([](const Row& r) { return r.q95; }));
    write_doubles(fg, "q05_raw", column([](const Row& r) { return r.raw_q05; }));
    write_doubles(fg, "q95_raw", column([](const Row& r) { return r.raw_q95; }));
    write_doubles(fg, "target", column([](const Row& r) { return r.target; }));
    write_doubles(fg, "error", column([](const Row& r) { return std::fabs(r.mean - r.target); }));
    fg.write_string_attribute("description",
                              "one row per (run, origin, horizon): log loss forecasts of the mean "
                              "loss over steps origin+horizon-4 .. +5; q05/q95 after calibration; "
                              "target NaN and inside -1 where the run lacks those steps");
    for (int b = 0; b < kBaselines; ++b) {
      io::H5Group bg = root.create_group(std::string("baselines/") + kBaselineNames[b]);
      write_doubles(bg, "forecast", column([b](const Row& r) { return r.base[b]; }));
      write_doubles(bg, "error",
                    column([b](const Row& r) { return std::fabs(r.base[b] - r.target); }));
      write_doubles(bg, "q05", column([b](const Row& r) { return r.base_lo[b]; }));
      write_doubles(bg, "q95", column([b](const Row& r) { return r.base_hi[b]; }));
      std::vector<int> inside(n);
      for (std::size_t i = 0; i < n; ++i) inside[i] = rows[i].base_inside[b];
      write_ints(bg, "inside", inside);
    }
    io::H5Group sg = root.create_group("summary");
    for (int fi = 0; fi < F; ++fi) {
      std::vector<double> e(static_cast<std::size_t>(K)), cv(static_cast<std::size_t>(K));
      for (int k = 0; k < K; ++k) {
        e[std::size_t(k)] = mean_error(fi, k);
        cv[std::size_t(k)] = coverage(fi, k);
      }
      io::H5Group g = sg.create_group(forecaster_names[fi]);
      write_doubles(g, "mean_error", e);
      write_doubles(g, "coverage", cv);
    }
    {
      std::vector<double> w(static_cast<std::size_t>(K));
      for (int k = 0; k < K; ++k) w[std::size_t(k)] = calibration.width_factor(k);
      write_doubles(sg, "hpt_width_factor", w);
    }
    io::H5Group og = root.create_group("origins");
    {
      std::vector<int> run;
      std::vector<std::int64_t> origin;
      std::vector<double> best_other, prob;
      for (const auto& o : origins) {
        run.push_back(o.run);
        origin.push_back(o.origin);
        best_other.push_back(o.best_other);
        prob.push_back(o.beat_probability);
      }
      write_ints(og, "run", run);
      write_int64(og, "origin", origin);
      write_doubles(og, "best_other", best_other);
      write_doubles(og, "beat_probability", prob);
    }
    io::H5Group rg = root.create_group("runs");
    for (int r = 0; r < R; ++r) {
      const io::Curve& run = runs[std::size_t(r)];
      io::H5Group g = rg.create_group(run.id);
      g.write_int_attribute("index", r);
      g.write_int_attribute("steps", std::int64_t(run.steps.size()));
      g.write_double_attribute("final_log_loss", final_log[std::size_t(r)]);
      g.write_double_attribute("beat_probability", latest_beat[std::size_t(r)]);
      g.write_int_attribute("stop_origin", stop_origin[std::size_t(r)]);
      g.write_double_attribute("stop_beat_probability", stop_probability[std::size_t(r)]);
      g.write_int_attribute("stopped", stopped[std::size_t(r)]);
      g.write_int_attribute("steps_saved", saved[std::size_t(r)]);
    }
    io::H5Group stop = root.create_group("stop");
    {
      std::vector<int> run;
      std::vector<std::int64_t> origin, steps_saved;
      for (int r = 0; r < R; ++r)
        if (stopped[std::size_t(r)]) {
          run.push_back(r);
          origin.push_back(stop_origin[std::size_t(r)]);
          steps_saved.push_back(saved[std::size_t(r)]);
        }
      write_ints(stop, "run", run);
      write_int64(stop, "origin", origin);
      write_int64(stop, "steps_saved", steps_saved);
      stop.write_double_attribute("stop_at", stop_at);
      stop.write_double_attribute("below_probability", stop_below);
      stop.write_int_attribute("best_run", best);
      stop.write_int_attribute("best_run_kept", best_kept ? 1 : 0);
      stop.write_int_attribute("total_steps_saved", total_saved);
      stop.write_int_attribute("total_run_steps", run_steps);
    }
    writer.commit();
  }
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace hpt::app
