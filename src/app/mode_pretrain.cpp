#include "app/mode_pretrain.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <iostream>

#include "app/output_location.hpp"
#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "forecast/baselines.hpp"
#include "forecast/logged_every_curve.hpp"
#include "forecast/pretrain_options.hpp"
#include "forecast/synthetic_curves.hpp"
#include "forecast/validation_curve.hpp"
#include "io/console.hpp"
#include "io/curve_files.hpp"
#include "io/level_model_file.hpp"

namespace hpt::app {

namespace {

// Which curves of each run of the corpus are fitted to (pretrain.recorded_runs,
// pretrain.validation_runs, pretrain.logged_every_runs).
struct CorpusViews {
  bool recorded = true, validation = false;
  long long logged_every = 0;
};

CorpusViews read_views(const Config& c) {
  CorpusViews v{c.get_bool("pretrain.recorded_runs"), c.get_bool("pretrain.validation_runs"),
                c.get_int("pretrain.logged_every_runs")};
  if (v.logged_every == 1)
    throw InputError(
        "pretrain.logged_every_runs = 1: expected 0 (no logged copies) or a logging interval of "
        "2 to 100 steps");
  if (!v.recorded && v.logged_every == 0 && !v.validation)
    throw InputError(
        "pretrain.recorded_runs = off with pretrain.logged_every_runs = 0 and "
        "pretrain.validation_runs = off: no curve would be fitted to; expected a logging "
        "interval of 2 to 100 steps for logged copies, or validation runs");
  return v;
}

// `run` as recorded, its validation curve and its copy logged every few steps, as `views` asks
// and where the run has them.
void add_with_views(forecast::Curve run, const CorpusViews& views, forecast::CurveSet& corpus) {
  forecast::Curve v, sparse;
  const bool with_validation = views.validation && forecast::validation_curve(run, v);
  const bool with_sparse =
      views.logged_every > 1 && forecast::logged_every_curve(run, views.logged_every, sparse);
  if (views.recorded) corpus.runs.push_back(std::move(run));
  if (with_validation) corpus.runs.push_back(std::move(v));
  if (with_sparse) corpus.runs.push_back(std::move(sparse));
}

// The runs of every file of pretrain.input whose split is one of pretrain.split (all when empty).
forecast::CurveSet read_corpus(const Config& c) {
  const std::string list = c.get_string("pretrain.input");
  const int synthetic = int(c.get_int("pretrain.synthetic_runs"));
  if (list.empty() && synthetic == 0)
    throw InputError(
        "pretrain.input is empty; expected the paths of HDF5 or CSV files of loss curves (the "
        "corpus), comma-separated, or pretrain.synthetic_runs > 0");
  const std::vector<std::string> splits = split_list(c.get_string("pretrain.split"));
  const CorpusViews views = read_views(c);
  forecast::CurveSet corpus;
  std::size_t matched = 0;
  for (const std::string& path : split_list(list)) {
    forecast::CurveSet set =
        io::read_curves_step_by_step(path, c.get_bool("pretrain.skip_bad_runs"));
    for (forecast::Curve& run : set.runs) {
      if (!splits.empty() && std::find(splits.begin(), splits.end(), run.split) == splits.end())
        continue;
      add_with_views(std::move(run), views, corpus);
      ++matched;
    }
    for (const std::string& why : set.skipped) corpus.skipped.push_back("'" + path + "' " + why);
    for (const std::string& note : set.notes) corpus.notes.push_back("'" + path + "': " + note);
  }
  if (matched == 0 && !list.empty())
    throw InputError("pretrain.split = '" + c.get_string("pretrain.split") +
                     "': no run of pretrain.input = '" + list + "' has one of these splits");
  for (forecast::Curve& run :
       forecast::synthetic_curves(synthetic, std::uint64_t(c.get_int("pretrain.synthetic_seed"))))
    corpus.runs.push_back(std::move(run));
  return corpus;
}

std::vector<forecast::LevelSample> corpus_samples(const forecast::CurveSet& set, const Config& c) {
  const forecast::LevelSampling sampling = forecast::read_level_sampling(c);
  std::vector<forecast::LevelSample> samples = forecast::level_samples(set.runs, sampling);
  if (samples.empty() && sampling.to_end)
    throw InputError("pretrain.input = '" + c.get_string("pretrain.input") +
                     "': no run gives a sample with pretrain.target = end (a sample needs " +
                     std::to_string(sampling.first_origin) +
                     " entries of history between pretrain.end_from and pretrain.end_to of the "
                     "run, and more than " +
                     std::to_string(forecast::kTargetBefore) + " steps after it)");
  if (samples.empty())
    throw InputError("pretrain.input = '" + c.get_string("pretrain.input") +
                     "': no run is long enough to give a sample at any of pretrain.horizons = " +
                     c.get_string("pretrain.horizons") + " (a sample needs " +
                     std::to_string(sampling.first_origin) +
                     " entries of history and the target window of its horizon)");
  return samples;
}

// In-sample mean |error| of the median against `last` (a change of 0), and the 90 % interval's
// coverage, per horizon (one row, "end", for a final-level model).
io::TextTable fit_table(const forecast::LevelModel& m,
                        const std::vector<forecast::LevelSample>& samples) {
  io::TextTable table(
      {"horizon", "samples", "mean |error| last", "mean |error| learned", "ratio", "90% coverage"});
  const bool to_end = m.target == forecast::LevelModel::Target::kEnd;
  for (int h : to_end ? std::vector<int>{0} : m.horizons) {
    double last = 0, learned = 0, inside = 0, n = 0;
    for (const forecast::LevelSample& s : samples) {
      if (s.horizon != h) continue;
      const forecast::LevelForecast f = forecast::level_forecast(m, s.f);
      const double target = s.f.last + s.change;
      last += std::fabs(s.change), learned += std::fabs(target - f.mid), n += 1;
      inside += (target >= f.lo && target <= f.hi) ? 1 : 0;
    }
    if (n == 0) continue;
    table.add_row({to_end ? std::string("end") : std::to_string(h), io::fmt(n), io::fmt(last / n),
                   io::fmt(learned / n), io::fmt(learned / std::max(last, 1e-300)),
                   io::fmt(inside / n)});
  }
  return table;
}

// What the model is for, from the sampling that made it.
void describe_target(forecast::LevelModel& m, const forecast::LevelSampling& s) {
  if (s.to_end) {
    m.target = forecast::LevelModel::Target::kEnd;
    m.end_from = s.end_from, m.end_to = s.end_to;
  } else {
    m.horizons = s.horizons;
  }
}

}  // namespace

void check_pretrain_inputs(const RunContext& ctx) {
  const forecast::CurveSet set = read_corpus(ctx.config);
  corpus_samples(set, ctx.config);
  check_output_file(ctx.output_path(".h5"), "output.name", ctx.output_dir);
  check_output_not_input(ctx.output_path(".h5"),
                         split_list(ctx.config.get_string("pretrain.input")), "pretrain.input");
}

int run_pretrain_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  const forecast::CurveSet set = read_corpus(c);
  for (const auto& why : set.skipped)
    std::cerr << "hpt: warning: pretrain.input: skipped " << why << "\n";
  for (const auto& note : set.notes) std::cout << "note: pretrain.input " << note << "\n";
  Kokkos::Timer timer;
  const std::vector<forecast::LevelSample> samples = corpus_samples(set, c);
  std::cout << "pretrain: " << set.runs.size() << " runs, " << samples.size()
            << " samples; fitting the 50, 5 and 95 % quantile regressions" << std::endl;
  forecast::LevelModel model = forecast::fit_level_model(samples, c.get_real("pretrain.ridge"),
                                                         int(c.get_int("pretrain.iterations")));
  const int cap = int(c.get_int("pretrain.iterations"));
  for (int q = 0; q < 3; ++q)
    if (model.rounds[std::size_t(q)] >= cap)
      std::cerr << "hpt: warning: the "
                << (q == 0   ? "50"
                    : q == 1 ? "5"
                             : "95")
                << " % quantile fit did not converge in pretrain.iterations = " << cap
                << " rounds; raise it\n";
  std::cout << "pretrain: quantile fits converged in " << model.rounds[0] << ", " << model.rounds[1]
            << " and " << model.rounds[2] << " rounds\n";
  describe_target(model, forecast::read_level_sampling(c));
  model.runs = (long long)set.runs.size();
  model.corpus = c.get_string("pretrain.input");
  std::cout << fit_table(model, samples).str()
            << "(in-sample: the corpus's own runs; judge a model "
            << "on runs it was not fitted to, with run.mode = forecast)\n"
            << "pretrain: " << io::fmt(timer.seconds()) << " s\n";
  const std::string path = ctx.output_path(".h5");
  io::save_level_model(model, path, ctx.resolved_ini);
  std::cout << "wrote " << path << "\n";
  return 0;
}

}  // namespace hpt::app
