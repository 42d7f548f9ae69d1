#include "app/output_location.hpp"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <filesystem>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace hpt::app {

namespace {

// Whether a folder can take new entries: access() alone says yes to root on a read-only mount, so
// a probe folder is made and removed at once.
bool writable_dir(const fs::path& p) {
  if (::access(p.c_str(), W_OK | X_OK) != 0) return false;
  std::string probe = (p / ".hpt-probe-XXXXXX").string();
  if (!::mkdtemp(probe.data())) return false;
  ::rmdir(probe.c_str());
  return true;
}

// The nearest folder of `p` (itself or an ancestor) that exists; "." for a relative path with none.
fs::path nearest_existing(fs::path p) {
  std::error_code ec;
  while (!p.empty() && !fs::exists(p, ec)) p = p.parent_path();
  return p.empty() ? fs::path(".") : p;
}

// True when the process `pid` is gone (kill(pid, 0) says no such process).
bool process_gone(long pid) {
  return pid > 0 && ::kill(pid_t(pid), 0) != 0 && errno == ESRCH;
}

}  // namespace

void check_output_dir(const std::string& dir, const std::string& key) {
  std::error_code ec;
  const fs::path p(dir);
  if (fs::exists(p, ec)) {
    if (!fs::is_directory(p, ec))
      throw InputError(key + " = '" + dir + "' exists and is not a folder; expected a folder");
    if (!writable_dir(p))
      throw InputError(key + " = '" + dir + "' is not writable; expected a writable folder");
    return;
  }
  const fs::path base = nearest_existing(p.parent_path());
  if (!fs::is_directory(base, ec))
    throw InputError(key + " = '" + dir + "' cannot be created: '" + base.string() +
                     "' is not a folder");
  if (!writable_dir(base))
    throw InputError(key + " = '" + dir + "' cannot be created: '" + base.string() +
                     "' is not writable");
}

void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs,
                            const std::string& input_key) {
  for (const std::string& in : inputs) {
    std::error_code ec;
    if (!fs::equivalent(fs::path(output), fs::path(in), ec)) continue;  // false where one is absent
    throw InputError("output.name: the output '" + output + "' is the input file '" + in + "' (" +
                     input_key + "); expected an output.dir or output.name naming another file");
  }
}

void check_output_file(const std::string& path, const std::string& key,
                       const std::string& will_create) {
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec))
    throw InputError(key + " = '" + path + "' is a folder; expected a file name");
  const fs::path parent = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!will_create.empty() && fs::path(will_create).lexically_normal() == parent.lexically_normal())
    return;  // checked by check_output_dir
  if (!fs::is_directory(parent, ec))
    throw InputError(key + " = '" + path + "': the folder '" + parent.string() +
                     "' does not exist; expected a file in an existing folder");
  if (!writable_dir(parent))
    throw InputError(key + " = '" + path + "': the folder '" + parent.string() +
                     "' is not writable");
}

void OutputDir::create() {
  std::error_code ec;
  // The folders this call creates, outermost first (remove_if_empty walks them innermost first).
  for (fs::path p(dir_); !p.empty() && !fs::exists(p, ec); p = p.parent_path())
    created_.insert(created_.begin(), p.string());
  fs::create_directories(dir_, ec);
  if (ec) throw InputError("output.dir = '" + dir_ + "' cannot be created: " + ec.message());
}

void OutputDir::remove_if_empty() {
  std::error_code ec;
  for (auto it = created_.rbegin(); it != created_.rend(); ++it)
    if (fs::is_empty(*it, ec)) fs::remove(*it, ec);
  created_.clear();
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir, const std::string& name) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string f = it->path().filename().string();
    const auto tmp = f.rfind(".tmp.");
    if (f.rfind(name, 0) != 0 || tmp == std::string::npos) continue;
    const std::string pid = f.substr(tmp + 5);
    if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos)
      continue;
    std::error_code rec;
    if (process_gone(std::stol(pid)) && fs::remove(it->path(), rec))
      removed.push_back(it->path().string());
  }
  return removed;
}

}  // namespace hpt::app
