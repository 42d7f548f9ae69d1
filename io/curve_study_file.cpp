#include "io/curve_study_file.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

#include "core/crash_point.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"

namespace hpt::io {

namespace {

using forecast::CurveStudyResult;
using forecast::ForecastRow;
using forecast::kBaselines;

void write_doubles(H5Group& g, const std::string& name, const std::vector<double>& v) {
  g.write_dataset(name, H5Element::Float64, v.data(), {v.size()});
}

void write_ints(H5Group& g, const std::string& name, const std::vector<int>& v) {
  g.write_dataset(name, H5Element::Int32, v.data(), {v.size()});
}

void write_int64(H5Group& g, const std::string& name, const std::vector<std::int64_t>& v) {
  g.write_dataset(name, H5Element::Int64, v.data(), {v.size()});
}

// One value per row (forecast or validation row).
template <class Row, class Get>
std::vector<double> column(const std::vector<Row>& rows, Get get) {
  std::vector<double> v(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) v[i] = get(rows[i]);
  return v;
}

void write_root_attributes(H5Group& root, const CurveStudyResult& result, int runs,
                           double gemm_gflops) {
  const forecast::CurveStudyTimings& t = result.timings;
  root.write_vector_attribute("horizons", result.horizons);
  root.write_int_attribute("runs", runs);
  root.write_int_attribute("every", result.every);
  root.write_double_attribute("seconds", t.seconds);
  root.write_double_attribute("run_steps_per_second", t.run_steps_per_second());
  root.write_string_attribute("training",
                              "online: truncated BPTT (dynamics.bptt) on the newest window of " +
                                  std::to_string(result.train_runs) +
                                  " runs per step, round robin, one Adam step each");
  root.write_int_attribute("training_updates", result.training_updates);
  root.write_double_attribute("rollout_member_steps_per_second", t.member_steps_per_second());
  root.write_double_attribute("rollout_gflops", result.rollout_gflops);
  root.write_double_attribute("gemm_gflops", gemm_gflops);
  root.write_string_attribute("beat_probability_method", result.beat_method);
  root.write_string_attribute(
      "baseline_interval_method",
      "forecast + empirical 5/95 % quantiles of the baseline's earlier realised signed errors "
      "(target - forecast) at that horizon over all runs; NaN (inside = -1) before 10 are known");
}

// /forecasts: one row per (run, origin, horizon).
void write_forecasts(H5Group& root, const CurveStudyResult& result) {
  const std::vector<ForecastRow>& rows = result.rows;
  const std::size_t n = rows.size();
  H5Group fg = root.create_group("forecasts");
  std::vector<int> run(n), horizon(n), inside(n);
  std::vector<std::int64_t> origin(n);
  for (std::size_t i = 0; i < n; ++i) {
    run[i] = rows[i].run;
    horizon[i] = result.horizons[std::size_t(rows[i].k)];
    inside[i] = rows[i].inside;
    origin[i] = rows[i].origin;
  }
  write_ints(fg, "run", run);
  write_int64(fg, "origin", origin);
  write_ints(fg, "horizon", horizon);
  write_ints(fg, "inside", inside);
  write_doubles(fg, "mean", column(rows, [](const ForecastRow& r) { return r.mean; }));
  write_doubles(fg, "q05", column(rows, [](const ForecastRow& r) { return r.q05; }));
  write_doubles(fg, "q50", column(rows, [](const ForecastRow& r) { return r.q50; }));
  write_doubles(fg, "q95", column(rows, [](const ForecastRow& r) { return r.q95; }));
  write_doubles(fg, "q05_raw", column(rows, [](const ForecastRow& r) { return r.raw_q05; }));
  write_doubles(fg, "q95_raw", column(rows, [](const ForecastRow& r) { return r.raw_q95; }));
  write_doubles(fg, "loglin_t", column(rows, [](const ForecastRow& r) { return r.loglin_t; }));
  write_doubles(fg, "target", column(rows, [](const ForecastRow& r) { return r.target; }));
  write_doubles(fg, "error",
                column(rows, [](const ForecastRow& r) { return std::fabs(r.mean - r.target); }));
  fg.write_string_attribute("description",
                            "one row per (run, origin, horizon): log loss forecasts of the mean "
                            "loss over steps origin+horizon-4 .. +5; q05/q95 after calibration; "
                            "target NaN and inside -1 where the run lacks those steps");
}

// /baselines/<name>: the baselines' forecasts of the same rows.
void write_baselines(H5Group& root, const std::vector<ForecastRow>& rows) {
  for (int b = 0; b < kBaselines; ++b) {
    H5Group bg = root.create_group(std::string("baselines/") + forecast::kBaselineNames[b]);
    write_doubles(bg, "forecast", column(rows, [b](const ForecastRow& r) { return r.base[b]; }));
    write_doubles(bg, "error", column(rows, [b](const ForecastRow& r) {
                    return std::fabs(r.base[b] - r.target);
                  }));
    write_doubles(bg, "q05", column(rows, [b](const ForecastRow& r) { return r.base_lo[b]; }));
    write_doubles(bg, "q95", column(rows, [b](const ForecastRow& r) { return r.base_hi[b]; }));
    std::vector<int> inside(rows.size());
    for (std::size_t i = 0; i < rows.size(); ++i) inside[i] = rows[i].base_inside[b];
    write_ints(bg, "inside", inside);
  }
}

// /summary: mean |error|, coverage and interval width per forecaster and horizon, hpt's width
// factors.
void write_summary(H5Group& root, const CurveStudyResult& result) {
  const forecast::HorizonScores& s = result.scores;
  const int K = s.horizons;
  H5Group sg = root.create_group("summary");
  for (int fi = 0; fi < forecast::kForecasters; ++fi) {
    std::vector<double> e(static_cast<std::size_t>(K)), cv(e.size()), w(e.size());
    for (int k = 0; k < K; ++k) {
      e[std::size_t(k)] = s.mean_error[s.at(fi, k)];
      cv[std::size_t(k)] = s.coverage[s.at(fi, k)];
      w[std::size_t(k)] = s.mean_width[s.at(fi, k)];
    }
    H5Group g = sg.create_group(forecast::kForecasterNames[fi]);
    write_doubles(g, "mean_error", e);
    write_doubles(g, "coverage", cv);
    write_doubles(g, "mean_width", w);
  }
  write_doubles(sg, "hpt_width_factor", result.width_factor);
}

// /validation: the learned forecasts of validation points, and their scores per horizon.
void write_validation(H5Group& root, const CurveStudyResult& result) {
  if (result.validation.empty()) return;
  H5Group vg = root.create_group("validation");
  const auto& rows = result.validation;
  std::vector<int> run, horizon;
  std::vector<std::int64_t> origin, step;
  for (const auto& v : rows) {
    run.push_back(v.run);
    origin.push_back(v.origin);
    horizon.push_back(result.horizons[std::size_t(v.k)]);
    step.push_back(v.f.val_step);
  }
  write_ints(vg, "run", run);
  write_int64(vg, "origin", origin);
  write_ints(vg, "horizon", horizon);
  write_int64(vg, "val_step", step);
  using Row = forecast::ValidationRow;
  write_doubles(vg, "last", column(rows, [](const Row& v) { return v.f.level; }));
  write_doubles(vg, "forecast", column(rows, [](const Row& v) { return v.f.mid; }));
  write_doubles(vg, "q05", column(rows, [](const Row& v) { return v.f.lo; }));
  write_doubles(vg, "q95", column(rows, [](const Row& v) { return v.f.hi; }));
  write_doubles(vg, "q05_raw", column(rows, [](const Row& v) { return v.f.raw_lo; }));
  write_doubles(vg, "q95_raw", column(rows, [](const Row& v) { return v.f.raw_hi; }));
  write_doubles(vg, "target", column(rows, [](const Row& v) { return v.f.target; }));
  const forecast::ValidationScores& s = result.validation_scores;
  write_doubles(vg, "learned_mean_error", s.learned_error);
  write_doubles(vg, "last_mean_error", s.last_error);
  write_doubles(vg, "coverage", s.coverage);
}

// /origins: each run's probability of beating the best other run at each origin.
void write_origins(H5Group& root, const std::vector<forecast::OriginRow>& origins) {
  H5Group og = root.create_group("origins");
  std::vector<int> run;
  std::vector<std::int64_t> origin;
  std::vector<double> best_other, others_median, prob, mid, lo, hi;
  for (const auto& o : origins) {
    run.push_back(o.run);
    origin.push_back(o.origin);
    best_other.push_back(o.best_other);
    others_median.push_back(o.others_median);
    prob.push_back(o.beat_probability);
    mid.push_back(o.final_mid), lo.push_back(o.final_lo), hi.push_back(o.final_hi);
  }
  write_ints(og, "run", run);
  write_int64(og, "origin", origin);
  write_doubles(og, "best_other", best_other);
  write_doubles(og, "others_median", others_median);
  write_doubles(og, "beat_probability", prob);
  write_doubles(og, "final_q50", mid);
  write_doubles(og, "final_q05", lo);
  write_doubles(og, "final_q95", hi);
}

// A run id as an HDF5 group name: '/' (a path separator there) and '%' percent-encoded, and the
// names '.' and '' (not allowed) encoded too. The id itself is the group's attribute `id`.
std::string group_name(const std::string& id) {
  std::string out;
  for (const char ch : id) {
    if (ch == '/')
      out += "%2F";
    else if (ch == '%')
      out += "%25";
    else
      out += ch;
  }
  if (out.empty() || out == ".") out = "%2E" + out.substr(out.empty() ? 0 : 1);
  return out;
}

// What a run's stop verdict read at its judging origin, as the attributes stop_*.
void write_stop_evidence(H5Group& g, const forecast::StopEvidence& e) {
  const std::pair<const char*, double> values[] = {
      {"stop_beat_probability", e.beat_probability},
      {"stop_final", e.final_mid},
      {"stop_others_median", e.others_median},
      {"stop_others_final_quantile", e.others_final_quantile},
      {"stop_level", e.level},
      {"stop_others_level_quantile", e.others_level_quantile}};
  for (const auto& [name, v] : values) g.write_double_attribute(name, v);
}

// /runs/<id>: each run's length, final loss and stop verdict.
void write_runs(H5Group& root, const std::vector<forecast::Curve>& runs,
                const forecast::StopList& s) {
  H5Group rg = root.create_group("runs");
  for (int r = 0; r < int(runs.size()); ++r) {
    const forecast::Curve& run = runs[std::size_t(r)];
    const std::size_t i = std::size_t(r);
    H5Group g = rg.create_group(group_name(run.id));
    g.write_string_attribute("id", run.id);
    g.write_int_attribute("index", r);
    g.write_int_attribute("steps", std::int64_t(run.steps.size()));
    g.write_double_attribute("final_log_loss", s.final_log_loss[i]);
    g.write_double_attribute("beat_probability", s.latest_beat[i]);
    g.write_int_attribute("stop_origin", s.stop_origin[i]);
    write_stop_evidence(g, s.judged[i]);
    g.write_int_attribute("stopped", s.stopped[i]);
    g.write_int_attribute("steps_saved", s.steps_saved[i]);
  }
}

// /stop: the stopped runs and the totals.
void write_stop_list(H5Group& root, const forecast::StopList& s, long long run_steps) {
  H5Group stop = root.create_group("stop");
  std::vector<int> run;
  std::vector<std::int64_t> origin, steps_saved;
  for (int r = 0; r < int(s.stopped.size()); ++r)
    if (s.stopped[std::size_t(r)]) {
      run.push_back(r);
      origin.push_back(s.stop_origin[std::size_t(r)]);
      steps_saved.push_back(s.steps_saved[std::size_t(r)]);
    }
  write_ints(stop, "run", run);
  write_int64(stop, "origin", origin);
  write_int64(stop, "steps_saved", steps_saved);
  stop.write_double_attribute("stop_at", s.stop_at);
  stop.write_double_attribute("below_probability", s.below_probability);
  stop.write_string_attribute("rule", forecast::stop_rule_name(s.rule));
  stop.write_double_attribute("quantile", s.quantile);
  stop.write_int_attribute("best_run", s.best_run);
  stop.write_int_attribute("best_run_kept", s.best_run_kept ? 1 : 0);
  stop.write_int_attribute("total_steps_saved", s.total_steps_saved);
  stop.write_int_attribute("total_run_steps", run_steps);
}

}  // namespace

void write_curve_study_file(const std::string& path, const std::string& resolved_deck,
                            const std::vector<forecast::Curve>& runs,
                            const CurveStudyResult& result, double gemm_gflops) {
  AtomicH5Writer writer(path);
  H5File& file = writer.file();
  write_hpt_header(file, HptFileKind::Forecast, resolved_deck);
  H5Group root = file.root();
  write_root_attributes(root, result, int(runs.size()), gemm_gflops);
  write_forecasts(root, result);
  write_baselines(root, result.rows);
  write_summary(root, result);
  write_origins(root, result.origins);
  write_validation(root, result);
  write_runs(root, runs, result.stop);
  write_stop_list(root, result.stop, result.timings.run_steps);
  crash_point("forecast_output_written", 0);  // the crash tests' instant: written, not yet renamed
  writer.commit();
}

}  // namespace hpt::io
