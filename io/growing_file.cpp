#include "io/growing_file.hpp"

#include <sys/stat.h>

#include <fstream>

namespace hpt::io {

namespace {

// Splits `text` at newlines into `lines`; what follows the last newline is left in `text`.
void take_lines(std::string& text, std::vector<std::string>& lines) {
  std::size_t begin = 0;
  for (std::size_t nl = text.find('\n'); nl != std::string::npos; nl = text.find('\n', begin)) {
    std::string line = text.substr(begin, nl - begin);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    begin = nl + 1;
  }
  text.erase(0, begin);
}

}  // namespace

GrowingFile::Update GrowingFile::read() {
  Update u;
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) {
    if (opened_) u.change = Change::kGone;
    opened_ = false;
    return u;
  }
  const bool replaced =
      opened_ && (std::uint64_t(st.st_dev) != device_ || std::uint64_t(st.st_ino) != inode_ ||
                  std::uint64_t(st.st_size) < offset_);
  if (replaced || !opened_) {
    if (replaced) u.change = Change::kRestarted;
    offset_ = 0, lines_read_ = 0, partial_.clear();
    device_ = std::uint64_t(st.st_dev), inode_ = std::uint64_t(st.st_ino);
    opened_ = true;
  }
  if (std::uint64_t(st.st_size) == offset_) return u;
  std::ifstream in(path_, std::ios::binary);
  if (!in) return u;  // vanished between stat and open: seen at the next read
  in.seekg(std::streamoff(offset_));
  std::string chunk(std::size_t(std::uint64_t(st.st_size) - offset_), '\0');
  in.read(&chunk[0], std::streamsize(chunk.size()));
  chunk.resize(std::size_t(in.gcount()));
  offset_ += chunk.size();
  partial_ += chunk;
  u.first_line = lines_read_ + 1;
  take_lines(partial_, u.lines);
  lines_read_ += long(u.lines.size());
  if (!u.lines.empty() && u.change == Change::kNone) u.change = Change::kGrew;
  return u;
}

}  // namespace hpt::io
