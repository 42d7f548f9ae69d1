#pragma once
// A text file that another process appends to (a training script's log of its loss curve): each
// read() returns the lines completed since the previous one. A last line without its newline is
// kept back until it is completed; a file that shrank or was replaced (another inode) is read again
// from its start; a file that vanished is reported as gone.
#include <cstdint>
#include <string>
#include <vector>

namespace hpt::io {

class GrowingFile {
 public:
  explicit GrowingFile(std::string path) : path_(std::move(path)) {}

  enum class Change { kNone, kGrew, kRestarted, kGone };
  struct Update {
    Change change = Change::kNone;
    std::vector<std::string> lines;  // completed lines, newline (and CR) removed
    long first_line = 1;             // 1-based number of lines[0] in the file
  };
  // The lines completed since the previous call (from the start after kRestarted).
  Update read();
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::uint64_t offset_ = 0, device_ = 0, inode_ = 0;
  bool opened_ = false;
  long lines_read_ = 0;
  std::string partial_;  // bytes after the newest newline
};

}  // namespace hpt::io
