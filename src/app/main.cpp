// hpt: start MPI where built with it, parse the command line and the deck (all input checked before
// any work), start Kokkos, print the header, dispatch run.mode. In a data-parallel run only rank 0
// prints and writes.
#include <Kokkos_Core.hpp>
#include <filesystem>
#include <iostream>
#include <memory>

#include "app/parity_styles.hpp"
#include "app/cli.hpp"
#include "app/device_placement.hpp"
#include "app/mode_bench.hpp"
#include "app/mode_compare.hpp"
#include "app/mode_forecast.hpp"
#include "app/mode_pretrain.hpp"
#include "app/mode_rollout.hpp"
#include "app/memory_budget.hpp"
#include "app/mode_train.hpp"
#include "app/mode_watch.hpp"
#include "app/output_location.hpp"
#include "app/parallel_inputs.hpp"
#include "app/run_context.hpp"
#include "app/schema.hpp"
#include "core/communicator.hpp"
#include "core/error.hpp"
#include "core/parallel_session.hpp"
#include "core/version.hpp"
#include "io/console.hpp"
#include "io/deck.hpp"

namespace {

// Kokkos 3.4 spells the thread-count flag --kokkos-threads, 4.x --kokkos-num-threads.
std::string kokkos_threads_flag(long n) {
#if KOKKOS_VERSION >= 40000
  return "--kokkos-num-threads=" + std::to_string(n);
#else
  return "--kokkos-threads=" + std::to_string(n);
#endif
}

int run_mode(const hpt::app::RunContext& ctx, const std::string& mode,
             const std::vector<std::string>& devices) {
  std::cout << hpt::io::run_header(ctx.deck_path, ctx.resolved_ini, devices) << std::flush;
  if (mode == "rollout") return hpt::app::run_rollout_mode(ctx);
  if (mode == "bench") return hpt::app::run_bench_mode(ctx);
  if (mode == "train") return hpt::app::run_train_mode(ctx);
  if (mode == "forecast") return hpt::app::run_forecast_mode(ctx);
  if (mode == "compare") return hpt::app::run_compare_mode(ctx);
  if (mode == "pretrain") return hpt::app::run_pretrain_mode(ctx);
  if (mode == "watch") return hpt::app::run_watch_mode(ctx);
  throw hpt::InternalError("run.mode '" + mode + "' has no driver");
}

int run(int argc, char** argv, const hpt::Communicator& world) {
  const auto cl = hpt::app::parse_command_line(argc, argv);
  const hpt::OptionSchema schema = hpt::app::build_schema();
  if (cl.help) {
    std::cout << hpt::app::usage_text() << "\nDeck options (section, key = default, description):\n"
              << schema.help_text();
    return 0;
  }
  if (cl.version) {
    std::cout << "hpt " << hpt::kVersion << ", precision " << hpt::kPrecision << ", Kokkos "
              << KOKKOS_VERSION << ", default execution space "
              << Kokkos::DefaultExecutionSpace::name() << "\n"
              << "MPI " << hpt::message_passing_description() << "\n";
    return 0;
  }
  const hpt::Config config = hpt::io::read_deck(schema, cl.deck, cl.overrides);

  namespace fs = std::filesystem;
  hpt::app::RunContext ctx{config, cl.deck, config.to_ini(), config.get_string("output.dir"),
                           config.get_string("output.name")};
  if (ctx.output_name.empty()) ctx.output_name = fs::path(cl.deck).stem().string();

  // Every input and output location is checked before any work; nothing is created yet.
  hpt::app::check_output_dir(ctx.output_dir, "output.dir");
  const std::string mode = config.get_string("run.mode");
  hpt::app::check_parallel_inputs(config, mode, world.size());
  hpt::app::check_parity_styles(config, mode);
  if (mode == "rollout") hpt::app::check_rollout_inputs(ctx);
  if (mode == "train") hpt::app::check_train_inputs(ctx);
  if (mode == "bench") hpt::app::check_bench_inputs(ctx);
  if (mode == "forecast") hpt::app::check_forecast_inputs(ctx);
  if (mode == "compare") hpt::app::check_compare_inputs(ctx);
  if (mode == "pretrain") hpt::app::check_pretrain_inputs(ctx);
  if (mode == "watch") hpt::app::check_watch_inputs(ctx);
  const hpt::MemoryNeed need = hpt::app::estimate_memory_need(config, mode);

  std::vector<std::string> kargs{argv[0]};
  if (config.get_int("run.threads") > 0)
    kargs.push_back(kokkos_threads_flag(config.get_int("run.threads")));
  for (const auto& a : cl.kokkos_args) kargs.push_back(a);
  // On a GPU backend with several processes, each its own GPU (docs/mpi.md#several-gpus).
  const hpt::app::DevicePlacement placement = hpt::app::choose_device(world, cl.kokkos_args);
  for (const auto& a : placement.kokkos_args) kargs.push_back(a);
  std::vector<char*> kargv;
  for (auto& a : kargs) kargv.push_back(a.data());
  int kargc = int(kargv.size());
  Kokkos::ScopeGuard kokkos(kargc, kargv.data());
  const std::vector<std::string> devices = hpt::app::describe_devices(world, placement);
  hpt::app::check_memory_need(
      need, hpt::app::available_memory_bytes(),
      std::string(Kokkos::DefaultExecutionSpace::name()) + " execution space");

  hpt::app::OutputDir output_dir(ctx.output_dir);
  if (world.is_root()) {  // the other processes of a data-parallel run write nothing
    output_dir.create();
    for (const auto& t : hpt::app::remove_stale_temporaries(ctx.output_dir, ctx.output_name))
      std::cout << "removed " << t << ", left by a process that no longer runs\n";
  }
  try {
    return run_mode(ctx, mode, devices);
  } catch (const hpt::InputError&) {
    if (world.is_root()) output_dir.remove_if_empty();  // a refused run leaves no empty folder
    throw;
  } catch (const std::bad_alloc& e) {  // also Kokkos' allocation failures
    if (world.is_root()) output_dir.remove_if_empty();
    throw hpt::InputError(std::string("out of memory (") + e.what() +
                          "): the sizes in the deck need more memory than this machine gives; "
                          "reduce them");
  }
}

// Where an internal error happened: "" on one process, " (rank 3 of 4)" in a data-parallel run.
std::string where(const hpt::Communicator& world) {
  if (world.size() == 1) return "";
  return " (rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size()) + ")";
}

}  // namespace

int main(int argc, char** argv) {
  std::unique_ptr<hpt::ParallelSession> session;
  try {
    session = std::make_unique<hpt::ParallelSession>(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "hpt: internal error: " << e.what() << "\n";
    return hpt::kExitInternalError;
  }
  const hpt::Communicator world = hpt::Communicator::world();
  if (!world.is_root()) std::cout.rdbuf(nullptr);  // rank 0 alone prints
  // Bad input is the same on every process (one deck, checked before any work): each exits 2 and
  // rank 0 alone says why.
  try {
    return run(argc, argv, world);
  } catch (const hpt::InputError& e) {
    if (world.is_root()) std::cerr << "hpt: input error: " << e.what() << "\n";
    return hpt::kExitInputError;
  } catch (const std::bad_alloc& e) {
    if (world.is_root())
      std::cerr << "hpt: input error: out of memory (" << e.what()
                << "): the sizes in the deck need more memory than this machine gives; reduce "
                   "them\n";
    return hpt::kExitInputError;
  } catch (const std::exception& e) {
    std::cerr << "hpt: internal error" << where(world) << ": " << e.what() << "\n";
    // The other processes may be waiting for this one in a collective: end them all.
    hpt::ParallelSession::abort_all(hpt::kExitInternalError);
    return hpt::kExitInternalError;
  }
}
