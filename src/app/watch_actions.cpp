#include "app/watch_actions.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "core/error.hpp"
#include "io/atomic_file.hpp"

extern char** environ;

namespace hpt::app {

namespace {

std::string utc_now() {
  char buf[32];
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

bool executable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string stop_file_path(const std::string& folder, const std::string& run_id) {
  std::string name = run_id;
  for (char& ch : name)
    if (ch == '/') ch = '_';
  return folder + "/" + name + ".stop";
}

int run_cancel_command(const std::string& command, const std::string& job) {
  std::vector<char*> argv{const_cast<char*>(command.c_str()), const_cast<char*>(job.c_str()),
                          nullptr};
  pid_t pid = 0;
  if (posix_spawnp(&pid, command.c_str(), nullptr, nullptr, argv.data(), environ) != 0) return 127;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return 127;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void check_cancel_command(const std::string& command) {
  if (command.find('/') != std::string::npos) {
    if (executable(command)) return;
  } else if (const char* path = std::getenv("PATH")) {
    std::istringstream dirs(path);
    for (std::string dir; std::getline(dirs, dir, ':');)
      if (executable((dir.empty() ? "." : dir) + "/" + command)) return;
  }
  throw InputError("watch.scancel_command = '" + command +
                   "' is not an executable file or a program on PATH; expected the command that "
                   "cancels a batch job (scancel on Slurm)");
}

WatchActions::WatchActions(std::string act, std::string scancel_command, std::string folder,
                           std::string log_path)
    : act_(std::move(act)),
      scancel_command_(std::move(scancel_command)),
      folder_(std::move(folder)),
      log_path_(std::move(log_path)),
      log_(read_file(log_path_)) {}

std::string WatchActions::act_on(const forecast::LiveRun& run, const forecast::RunStatus& st) {
  if (act_ == "file") {
    const std::string path = stop_file_path(folder_, run.curve.id);
    io::write_text_file_atomically(path, "stopped by hpt watch: " + st.reason + "\n");
    return "wrote " + path;
  }
  if (act_ == "scancel") {
    if (run.job.empty()) return "not cancelled: no job id (a `job` column or NAME-JOBID.csv)";
    const int rc = run_cancel_command(scancel_command_, run.job);
    return scancel_command_ + " " + run.job +
           (rc == 0 ? "" : " failed (exit " + std::to_string(rc) + ")");
  }
  return "no action (watch.act = none)";
}

std::string WatchActions::stop(long long poll, const forecast::LiveRun& run,
                               const forecast::RunStatus& st) {
  const std::string line = utc_now() + " poll " + std::to_string(poll) + " stop '" + run.curve.id +
                           "': " + act_on(run, st) + "; " + st.reason;
  log_ += line + "\n";
  log_changed_ = true;
  return line;
}

void WatchActions::flush() {
  if (!log_changed_) return;
  io::write_text_file_atomically(log_path_, log_);
  log_changed_ = false;
}

}  // namespace hpt::app
