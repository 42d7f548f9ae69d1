#pragma once
// Where a run writes: checked before any work (so an unwritable place fails at once, not after the
// run), created only once the run is accepted, and removed again if the run is then refused.
#include <string>
#include <vector>

namespace hpt::app {

// InputError naming `key` unless `dir` is, or can be created as, a writable folder. Creates
// nothing.
void check_output_dir(const std::string& dir, const std::string& key);

// InputError naming `key` unless a file can be renamed into place at `path`: not a folder, in a
// writable folder that exists or is `will_create` (the run's output folder).
void check_output_file(const std::string& path, const std::string& key,
                       const std::string& will_create = "");

// InputError naming output.name unless `output` is a different file from every existing one of
// `inputs` (the files read from the deck key `input_key`): the atomic rename that writes the
// output would otherwise replace the user's data with the run's result.
void check_output_not_input(const std::string& output, const std::vector<std::string>& inputs,
                            const std::string& input_key);

// The run's output folder: created on create(); folders it created are removed again by
// remove_if_empty() (a refused run leaves nothing behind).
class OutputDir {
 public:
  explicit OutputDir(std::string dir) : dir_(std::move(dir)) {}
  void create();
  void remove_if_empty();

 private:
  std::string dir_;
  std::vector<std::string> created_;  // outermost last
};

// Removes temporaries "<dir>/<name>*.tmp.<pid>" that processes which no longer run left behind
// (killed while writing); returns their paths. Only this run's names are touched.
std::vector<std::string> remove_stale_temporaries(const std::string& dir, const std::string& name);

}  // namespace hpt::app
