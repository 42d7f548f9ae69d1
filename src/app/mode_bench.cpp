#include "app/mode_bench.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <string>
#include <iostream>

#include "app/bench_kernels.hpp"
#include "app/bench_reference.hpp"
#include "app/bench_sizes.hpp"
#include "app/bench_training.hpp"
#include "app/gemm_probe.hpp"
#include "core/host_blas.hpp"
#include "core/config_lists.hpp"
#include "core/error.hpp"
#include "app/output_location.hpp"
#include "core/registry.hpp"
#include "core/version.hpp"
#include "io/atomic_file.hpp"
#include "io/console.hpp"
#include "io/hdf5_format.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/encode_rich.hpp"
#include "kernels/gru_step.hpp"
#include "physics-style-modules/encoder/register.hpp"

namespace hpt::app {

void declare_bench_options(OptionSchema& s) {
  s.add_string("bench.sizes", "small,prototype,wide,batch,sweep",
               "named rollout sizes to time (docs/bench.md) (comma-separated)");
  s.add_string("bench.rollout_kernels", "auto",
               "rollout kernels timed at every size: auto (the one the dispatcher picks), "
               "persistent, tiled, tiled-1, team-per-path, gemm (comma-separated; a kernel that "
               "cannot run a size is skipped with a note)");
  s.add_string("bench.training_sizes", "",
               "named sizes of the RSSM ensemble's online training step to time: forecast, "
               "default, h1024, e64 (docs/bench.md) (comma-separated; empty: none)");
  s.add_string("bench.encoder_runs", "1,1024,65536", "encoder batch sizes R (comma-separated)");
  s.add_int("bench.encoder_history", 256, "history length of every encoded run", 1, 1 << 20);
  s.add_string("bench.encoder_styles", "rich,prototype",
               "encoder styles to time, in this order (comma-separated)");
  s.add_string(
      "bench.encoder_layouts", "",
      "layouts of runs on threads timed for the rich encoder's feature kernel alone, "
      "without the normaliser: auto (the encoder's choice at each R), team, thread, series "
      "(comma-separated; empty: none)");
  s.add_int("bench.warmup", 2, "untimed runs before timing", 0, 1000);
  s.add_int("bench.repeat", 5, "timed runs; median and min are reported", 1, 100000);
  s.add_int("bench.reference_scenarios", 2,
            "scenarios (all members) or encoder runs recomputed by the plain host reference", 1,
            1 << 20);
  s.add_real("bench.peak_gflops", 0.0,
             "FP32 peak of the device in GFLOP/s for the fraction-of-peak column (0: not shown)",
             0);
  s.add_int("bench.copy_mb", 256, "size of the device copy that measures memory bandwidth (MiB)", 1,
            1 << 20);
}

void check_bench_inputs(const RunContext& ctx) {
  for (const char* suffix : {".csv", ".h5"})
    check_output_file(ctx.output_path(suffix), "output.name", ctx.output_dir);
  parse_rollout_sizes(ctx.config.get_string("bench.sizes"), "bench.sizes");
  parse_rollout_kernels(ctx.config.get_string("bench.rollout_kernels"), "bench.rollout_kernels");
  parse_training_sizes(ctx.config.get_string("bench.training_sizes"), "bench.training_sizes");
  parse_positive_list(ctx.config.get_string("bench.encoder_runs"), "bench.encoder_runs",
                      "1,1024,65536");
  parse_encoder_layouts(ctx.config.get_string("bench.encoder_layouts"), "bench.encoder_layouts");
  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  const auto known = encoders.names();
  for (const std::string& style : split_list(ctx.config.get_string("bench.encoder_styles")))
    if (std::find(known.begin(), known.end(), style) == known.end())
      throw InputError("bench.encoder_styles = '" + ctx.config.get_string("bench.encoder_styles") +
                       "': '" + style + "' is not an encoder style (expected e.g. rich,prototype)");
}

namespace {

struct Timing {
  double median = 0, min = 0;
};

template <class F>
Timing time_kernel(F&& f, int warmup, int repeat) {
  for (int i = 0; i < warmup; ++i) f();
  Kokkos::fence();
  std::vector<double> t;
  for (int i = 0; i < repeat; ++i) {
    Kokkos::fence();
    Kokkos::Timer timer;
    f();
    Kokkos::fence();
    t.push_back(timer.seconds());
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

// Device-to-device copy bandwidth in GB/s (bytes read + bytes written), the memory limit of
// docs/bench.md#limits.
double measure_copy_bandwidth(std::size_t mib, int repeat) {
  const std::size_t n = mib * (1u << 20) / sizeof(float);
  View1<float> a("hpt::bench_copy_a", n), b("hpt::bench_copy_b", n);
  Kokkos::deep_copy(a, 1.0f);
  const Timing t = time_kernel([&] { Kokkos::deep_copy(b, a); }, 2, std::max(repeat, 5));
  return 2.0 * n * sizeof(float) / t.median / 1e9;
}

struct Row {
  std::string kernel, size;
  long E = 0, N = 0, H = 0, Y = 0, R = 0;
  Timing t;
  // gflops: the model's FLOP count (docs/bench.md#flop-counts) over the time, the basis of a
  // comparison with another implementation; exec_gflops: the FLOPs the kernel executes (fewer
  // where it skips work, e.g. the tiled rollout's constant inputs), the basis of %peak.
  double us_per_step = 0, ns_per_member_step = 0, member_steps_per_s = 0, gflops = 0,
         exec_gflops = 0, peak_fraction = -1, gbs = 0, bw_fraction = -1, max_deviation = -1;
  double gemm_gflops = -1, gemm_fraction = -1;  // the same-run GEMM of the step's shape
};

// The settings every timing shares.
struct BenchSettings {
  int warmup = 0, repeat = 0, ref_scenarios = 0;
  double peak = 0;
  std::uint64_t seed = 0;
};

// Rollout kernel k of one size, timed and checked against the host.
Row bench_rollout(const RolloutSize& sz, const RolloutKernel k, const RolloutBenchInputs& in,
                  RolloutOutputs<real>& out, const BenchSettings& b) {
  const double flops = rollout_flops_per_member_step(sz.hidden, sz.input, sz.stochastic);
  const double executed = rollout_executed_flops_per_member_step(
      k, sz.hidden, sz.input, sz.stochastic, in.settings.feature_update, sz.scenarios, sz.horizon);
  const double member_steps = double(sz.members) * sz.scenarios * sz.horizon;
  Row r;
  r.kernel = std::string("rollout/") + rollout_kernel_name<ExecSpace>(k);  // e.g. rollout/tiled-16
  r.size = sz.name;
  r.E = sz.members, r.N = sz.scenarios, r.H = sz.hidden, r.Y = sz.horizon;
  // As the forecaster rolls out: its buffers kept between calls (the first, untimed, allocates).
  RolloutWorkspace<real, ExecSpace::memory_space> workspace;
  r.t = time_kernel(
      [&] {
        ensemble_rollout_with(k, ExecSpace(), in.params, in.reset, in.h0, in.inputs, in.settings,
                              out, &workspace);
      },
      b.warmup, b.repeat);
  r.us_per_step = r.t.median / sz.horizon * 1e6;
  r.ns_per_member_step = r.t.median / member_steps * 1e9;
  r.member_steps_per_s = member_steps / r.t.median;
  r.gflops = flops * member_steps / r.t.median / 1e9;
  r.exec_gflops = executed * member_steps / r.t.median / 1e9;
  if (b.peak > 0) r.peak_fraction = r.exec_gflops / b.peak;
  r.max_deviation = rollout_reference_deviation(in, out, b.ref_scenarios);
  return r;
}

// The kernels of bench.rollout_kernels that run this size, auto resolved, each once.
std::vector<RolloutKernel> kernels_for_size(const std::vector<BenchRolloutKernel>& wanted,
                                            const RolloutSize& sz, const GruReset reset) {
  std::vector<RolloutKernel> out;
  for (const BenchRolloutKernel& w : wanted) {
    const RolloutKernel k =
        w ? *w
          : choose_rollout_kernel<ExecSpace, real>(sz.members, sz.scenarios, sz.hidden, sz.input,
                                                   sz.stochastic, reset);
    if (std::find(out.begin(), out.end(), k) != out.end()) continue;
    if (rollout_kernel_runs<ExecSpace, real>(k, sz.members, sz.scenarios, sz.hidden, sz.input,
                                             sz.stochastic, reset))
      out.push_back(k);
    else
      std::cout << "  rollout/" << rollout_kernel_name<ExecSpace>(k) << " cannot run size "
                << sz.name << " on " << ExecSpace::name() << ": not timed" << std::endl;
  }
  return out;
}

// One GRU step over all N x E rows of a size.
Row bench_gru_step(const RolloutSize& sz, const RolloutBenchInputs& in, const BenchSettings& b) {
  View3<real> x("hpt::bench_x", sz.scenarios, sz.members, sz.input);
  View3<real> h("hpt::bench_h", sz.scenarios, sz.members, sz.hidden);
  View3<real> h_out("hpt::bench_h_out", sz.scenarios, sz.members, sz.hidden);
  fill_uniform(ExecSpace(), View1<real>(x.data(), x.size()), 11, 1, 0, 1.0);
  fill_uniform(ExecSpace(), View1<real>(h.data(), h.size()), 11, 2, 0, 1.0);
  Row g;
  g.kernel = "gru_step";
  g.size = sz.name;
  g.E = sz.members, g.N = sz.scenarios, g.H = sz.hidden, g.Y = 1;
  g.t = time_kernel([&] { gru_step(ExecSpace(), in.params.gru, in.reset, x, h, h_out); }, b.warmup,
                    b.repeat * 10);
  const double gru_ms = double(sz.members) * sz.scenarios;
  g.us_per_step = g.t.median * 1e6;
  g.ns_per_member_step = g.t.median / gru_ms * 1e9;
  g.member_steps_per_s = gru_ms / g.t.median;
  g.gflops = gru_step_flops(sz.hidden, sz.input) * gru_ms / g.t.median / 1e9;
  g.exec_gflops = g.gflops;
  g.peak_fraction = b.peak > 0 ? g.gflops / b.peak : -1;
  g.max_deviation = gru_reference_deviation(in, x, h, h_out, b.ref_scenarios);
  return g;
}

// The GEMM rate this machine reaches in this run on the shape of one member's GRU step over the
// size's paths (N x (I + H) times (I + H) x 3H, the working precision): the host's optimised BLAS
// where the build has it (the SGEMM rate a CPU kernel is judged against), else KokkosBlas::gemm on
// the execution space. It is the reference of the %GEMM column.
void attach_gemm_rate(const RolloutSize& sz, Row* const first, Row* const last) {
  const int m = int(sz.scenarios), n = 3 * sz.hidden, k = sz.input + sz.hidden;
  double gemm = measure_host_blas_gflops(m, n, k);
  if (gemm < 0) gemm = measure_gemm_gflops(m, n, k);
  for (Row* r = first; r != last; ++r) {
    r->gemm_gflops = gemm;
    r->gemm_fraction = r->gflops / gemm;
  }
}

// What the %GEMM column is measured against.
std::string gemm_reference() {
  const std::string blas = host_blas_description();
  return blas.empty() ? std::string("KokkosBlas::gemm on ") + ExecSpace::name() : blas;
}

void bench_rollout_sizes(const Config& c, const BenchSettings& b, std::vector<Row>& rows) {
  const auto kernels =
      parse_rollout_kernels(c.get_string("bench.rollout_kernels"), "bench.rollout_kernels");
  for (const auto& sz : parse_rollout_sizes(c.get_string("bench.sizes"), "bench.sizes")) {
    Kokkos::Profiling::pushRegion("hpt::bench_rollout_" + sz.name);
    RolloutBenchInputs in = make_rollout_bench_inputs(sz, b.seed);
    RolloutOutputs<real> out(sz.scenarios, sz.members, sz.hidden, sz.horizon);
    const std::size_t first = rows.size();
    for (const RolloutKernel k : kernels_for_size(kernels, sz, in.reset))
      rows.push_back(bench_rollout(sz, k, in, out, b));
    rows.push_back(bench_gru_step(sz, in, b));
    attach_gemm_rate(sz, rows.data() + first, rows.data() + rows.size());
    Kokkos::Profiling::popRegion();
    std::cout << "  timed " << sz.name << std::endl;
  }
}

// One online training step of the RSSM ensemble at one size: truncated BPTT over a full window
// of K samples and the optimizer step, the forecaster's own code path (app/bench_training.hpp).
Row bench_training_step(const Config& c, const TrainingSize& sz, const BenchSettings& b) {
  TrainingStepBench bench(c, sz, b.seed);
  Row r;
  r.kernel = "train_step";
  r.size = sz.name;
  r.E = sz.members, r.N = 1, r.H = sz.hidden, r.Y = sz.bptt;
  r.t = time_kernel([&] { bench.step(); }, b.warmup, b.repeat);
  const RssmTrainReport last = bench.step();  // untimed: every step trained on a full window
  HPT_REQUIRE(last.trained && last.samples == sz.bptt && std::isfinite(last.loss),
              "bench: the training step of size " + sz.name + " did not train on a full window");
  const double member_samples = double(sz.members) * sz.bptt;
  r.us_per_step = r.t.median * 1e6;
  r.ns_per_member_step = r.t.median / member_samples * 1e9;
  r.member_steps_per_s = member_samples / r.t.median;
  r.gflops = training_step_flops(sz) / r.t.median / 1e9;
  r.exec_gflops = r.gflops;
  if (b.peak > 0) r.peak_fraction = r.gflops / b.peak;
  return r;
}

void bench_training_sizes(const Config& c, const BenchSettings& b, std::vector<Row>& rows) {
  for (const auto& sz :
       parse_training_sizes(c.get_string("bench.training_sizes"), "bench.training_sizes")) {
    Kokkos::Profiling::pushRegion("hpt::bench_train_" + sz.name);
    rows.push_back(bench_training_step(c, sz, b));
    Kokkos::Profiling::popRegion();
    std::cout << "  timed training step " << sz.name << std::endl;
  }
}

// The configuration of one encoder style at the bench's history length.
Config encoder_config(const Config& c, const std::string& style) {
  Config ec = c;
  ec.set("encoder.style", style, "bench");
  ec.set("encoder.loss_history", std::to_string(c.get_int("bench.encoder_history")), "bench");
  return ec;
}

// The row of one encoder timing: `bytes` moved per launch over R runs.
Row encoder_row(const std::string& kernel, long R, int history_len, const Timing& t,
                std::size_t bytes, double copy_gbs, double max_deviation) {
  Row r;
  r.kernel = kernel;
  r.size = "R=" + std::to_string(R);
  r.R = R;
  r.Y = history_len;
  r.t = t;
  r.us_per_step = t.median * 1e6 / double(R);  // us per encoded run
  r.gbs = double(bytes) / t.median / 1e9;
  r.bw_fraction = r.gbs / copy_gbs;
  r.max_deviation = max_deviation;
  return r;
}

// One encoder style on R runs with histories of bench.encoder_history steps.
Row bench_encoder(const Config& c, const Registry<Encoder>& encoders, const std::string& style,
                  long R, double copy_gbs, const BenchSettings& b) {
  const int history_len = int(c.get_int("bench.encoder_history"));
  auto encoder = encoders.create(style, encoder_config(c, style));
  auto history = encoder->create_history(int(R));
  const auto host = fill_random_history(history, history_len, b.ref_scenarios, b.seed);
  View2<real> features("hpt::bench_features", R, kFeatures);
  const Timing t = time_kernel([&] { encoder->encode(history, features); }, b.warmup, b.repeat);
  return encoder_row("encode_" + style, R, history_len, t, encoder->bytes_per_encode(int(R)),
                     copy_gbs, encoder_reference_deviation(style, history, host));
}

// The rich encoder's feature kernel alone (no normaliser) on R runs, in one layout (not Auto).
Row bench_rich_layout(const Config& c, const Registry<Encoder>& encoders, const RunLayout layout,
                      long R, double copy_gbs, const BenchSettings& b) {
  const int history_len = int(c.get_int("bench.encoder_history"));
  auto history = encoders.create("rich", encoder_config(c, "rich"))->create_history(int(R));
  const auto host = fill_random_history(history, history_len, b.ref_scenarios, b.seed);
  View2<real> raw("hpt::bench_raw_features", R, kFeatures);
  const EncodeLaunch launch{layout, 0};
  rich::RichWorkspace<MemSpace> workspace;  // allocated once, as the encoder keeps it
  workspace.fit(int(R));
  const Timing t = time_kernel([&] { encode_rich(ExecSpace(), history, raw, launch, &workspace); },
                               b.warmup, b.repeat);
  const std::size_t bytes = encode_rich_bytes(std::size_t(R), std::size_t(history.loss_capacity()),
                                              std::size_t(history.other_capacity()), sizeof(real));
  return encoder_row("encode_rich_raw/" + encoder_layout_name(layout), R, history_len, t, bytes,
                     copy_gbs, encoder_reference_deviation("rich", history, host, launch));
}

// The layouts of bench.encoder_layouts at R runs, auto resolved, each once.
std::vector<RunLayout> layouts_for_runs(const std::vector<RunLayout>& wanted, long R) {
  std::vector<RunLayout> out;
  for (const RunLayout w : wanted) {
    const RunLayout layout = resolve_layout<ExecSpace>(w, int(R));
    if (std::find(out.begin(), out.end(), layout) == out.end()) out.push_back(layout);
  }
  return out;
}

void bench_encoders(const Config& c, const BenchSettings& b, double copy_gbs,
                    std::vector<Row>& rows) {
  Registry<Encoder> encoders("encoder");
  register_encoder_styles(encoders);
  const auto runs =
      parse_positive_list(c.get_string("bench.encoder_runs"), "bench.encoder_runs", "1,1024,65536");
  for (const std::string& style : split_list(c.get_string("bench.encoder_styles"))) {
    for (const long R : runs) {
      Kokkos::Profiling::pushRegion("hpt::bench_encode_" + style);
      rows.push_back(bench_encoder(c, encoders, style, R, copy_gbs, b));
      Kokkos::Profiling::popRegion();
    }
  }
  const auto layouts =
      parse_encoder_layouts(c.get_string("bench.encoder_layouts"), "bench.encoder_layouts");
  for (const long R : runs)
    for (const RunLayout layout : layouts_for_runs(layouts, R))
      rows.push_back(bench_rich_layout(c, encoders, layout, R, copy_gbs, b));
}

io::TextTable bench_table(const std::vector<Row>& rows) {
  auto opt = [](double v, int d = 4) { return v < 0 ? std::string("-") : io::fmt(v, d); };
  io::TextTable table({"kernel", "size", "E", "N|R", "H", "Y", "median ms", "min ms", "us/step",
                       "ns/member-step", "member-steps/s", "GFLOP/s", "exec GFLOP/s", "%peak",
                       "%GEMM", "GB/s", "%copy BW", "max dev"});
  for (const auto& r : rows) {
    const bool enc = r.R > 0;
    table.add_row(
        {r.kernel, r.size, enc ? "-" : std::to_string(r.E), std::to_string(enc ? r.R : r.N),
         enc ? "-" : std::to_string(r.H), std::to_string(r.Y), io::fmt(r.t.median * 1e3),
         io::fmt(r.t.min * 1e3), io::fmt(r.us_per_step), enc ? "-" : io::fmt(r.ns_per_member_step),
         enc ? "-" : io::fmt(r.member_steps_per_s), enc ? "-" : io::fmt(r.gflops),
         enc ? "-" : io::fmt(r.exec_gflops),
         r.peak_fraction < 0 ? "-" : io::fmt(100 * r.peak_fraction, 3),
         r.gemm_fraction < 0 ? "-" : io::fmt(100 * r.gemm_fraction, 3), enc ? io::fmt(r.gbs) : "-",
         r.bw_fraction < 0 ? "-" : io::fmt(100 * r.bw_fraction, 3), opt(r.max_deviation, 3)});
  }
  return table;
}

void write_bench_csv(const std::string& path, const std::vector<Row>& rows, double copy_gbs) {
  std::ostringstream f;
  f << "kernel,size,E,N,R,H,Y,median_s,min_s,us_per_step,ns_per_member_step,member_steps_per_s,"
       "gflops,exec_gflops,peak_fraction,gemm_gflops,gemm_fraction,gbs,copy_gbs,bw_fraction,"
       "max_deviation,backend\n";
  for (const auto& r : rows)
    f << r.kernel << "," << r.size << "," << r.E << "," << r.N << "," << r.R << "," << r.H << ","
      << r.Y << "," << r.t.median << "," << r.t.min << "," << r.us_per_step << ","
      << r.ns_per_member_step << "," << r.member_steps_per_s << "," << r.gflops << ","
      << r.exec_gflops << "," << r.peak_fraction << "," << r.gemm_gflops << "," << r.gemm_fraction
      << "," << r.gbs << "," << copy_gbs << "," << r.bw_fraction << "," << r.max_deviation << ",\""
      << io::backend_description() << "\"\n";
  io::write_text_file_atomically(path, f.str());
}

void write_bench_h5(const RunContext& ctx, const std::vector<Row>& rows, const io::TextTable& table,
                    double copy_gbs) {
  io::AtomicH5Writer writer(ctx.output_path(".h5"));
  io::write_hpt_header(writer.file(), io::HptFileKind::Bench, ctx.resolved_ini);
  io::H5Group root = writer.file().root();
  root.write_string_attribute("table_csv", table.csv());
  root.write_double_attribute("copy_gbs", copy_gbs);
  root.write_string_attribute("gemm_reference", gemm_reference());
  std::vector<double> med, us, dev;
  for (const auto& r : rows)
    med.push_back(r.t.median), us.push_back(r.us_per_step), dev.push_back(r.max_deviation);
  root.write_dataset("median_s", io::H5Element::Float64, med.data(), {med.size()});
  root.write_dataset("us_per_step", io::H5Element::Float64, us.data(), {us.size()});
  root.write_dataset("max_deviation", io::H5Element::Float64, dev.data(), {dev.size()});
  writer.commit();
}

}  // namespace

int run_bench_mode(const RunContext& ctx) {
  const Config& c = ctx.config;
  BenchSettings b;
  b.warmup = int(c.get_int("bench.warmup")), b.repeat = int(c.get_int("bench.repeat"));
  b.peak = c.get_real("bench.peak_gflops");
  b.ref_scenarios = int(c.get_int("bench.reference_scenarios"));
  b.seed = std::uint64_t(c.get_int("run.seed"));
  const double copy_gbs = measure_copy_bandwidth(std::size_t(c.get_int("bench.copy_mb")), b.repeat);
  std::cout << "\nmeasured device copy bandwidth: " << io::fmt(copy_gbs) << " GB/s\n";
  std::vector<Row> rows;
  bench_rollout_sizes(c, b, rows);
  bench_training_sizes(c, b, rows);
  bench_encoders(c, b, copy_gbs, rows);
  const io::TextTable table = bench_table(rows);
  std::cout << "\n"
            << io::backend_description() << ", "
            << "precision " << kPrecision << "\n"
            << "(us/step: per rollout step, per GRU step, per training step (train_step: Y is the "
               "window's K, ns/member-step per member-sample), or per encoded run; GFLOP/s: the "
               "model's count, 6 H (H + I) per GRU member-step plus the heads, three times that "
               "per member-sample of a training step; exec GFLOP/s: the FLOPs the "
               "kernel executes (the tiled rollout skips the constant inputs' product), the basis "
               "of %peak; %GEMM: of the GEMM rate of the step's shape measured now with "
            << gemm_reference()
            << "; max dev: largest |kernel - host reference| / max(1, |reference|) on the checked "
               "rows)\n"
            << table.str();
  if (!host_blas_description().empty() && std::getenv("OMP_PROC_BIND"))
    std::cout << "note: OMP_PROC_BIND is set: OpenBLAS's threads may then share the cores bound to "
                 "hpt's threads (on the 2-core development machine its rate halved and %GEMM "
                 "doubled); measure %GEMM without it\n";
  write_bench_csv(ctx.output_path(".csv"), rows, copy_gbs);
  write_bench_h5(ctx, rows, table, copy_gbs);
  std::cout << "wrote " << ctx.output_path(".csv") << " and " << ctx.output_path(".h5") << "\n";
  return 0;
}

}  // namespace hpt::app
