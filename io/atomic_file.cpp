#include "io/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"

namespace fs = std::filesystem;

namespace hpt::io {

namespace {

// fsync of a file or directory by path; returns errno (0 on success).
int fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) return errno;
  const int result = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return result;
}

std::string directory_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

AtomicH5Writer::AtomicH5Writer(const std::string& path, AtomicStart start)
    : path_(path), temp_path_(path + ".tmp." + std::to_string(::getpid())) {
  if (start == AtomicStart::Empty) {
    file_ = H5File::create(temp_path_);
    return;
  }
  H5File::open_read(path_).close();  // the usual messages for a missing or broken file
  std::error_code ec;
  fs::copy_file(path_, temp_path_, fs::copy_options::overwrite_existing, ec);
  if (ec) throw InputError("cannot copy '" + path_ + "' to '" + temp_path_ + "': " + ec.message());
  try {
    file_ = H5File::open_readwrite(temp_path_);
  } catch (...) {
    fs::remove(temp_path_, ec);
    throw;
  }
}

AtomicH5Writer::~AtomicH5Writer() {
  if (committed_) return;
  try {
    file_.close();
  } catch (...) {
    // The temporary is deleted below either way.
  }
  std::error_code ec;
  fs::remove(temp_path_, ec);
}

void AtomicH5Writer::commit() {
  HPT_REQUIRE(!committed_, "AtomicH5Writer::commit called twice for '" + path_ + "'");
  file_.close();
  if (const int err = fsync_path(temp_path_, O_RDONLY))
    throw InputError("cannot write file '" + temp_path_ + "' to disk: " + std::strerror(err));
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0)
    throw InputError("cannot rename '" + temp_path_ + "' to '" + path_ +
                     "': " + std::strerror(errno));
  committed_ = true;
  // Makes the rename itself durable; a failure here leaves a complete file in place, so it is not
  // reported (some file systems do not support fsync on directories).
  fsync_path(directory_of(path_), O_RDONLY | O_DIRECTORY);
}

void write_text_file_atomically(const std::string& path, const std::string& text) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw InputError("cannot create '" + temp + "': " + std::strerror(errno));
  const char* p = text.data();
  std::size_t left = text.size();
  int err = 0;
  while (left > 0 && err == 0) {
    const ssize_t n = ::write(fd, p, left);
    if (n < 0 && errno != EINTR) err = errno;
    if (n > 0) p += n, left -= std::size_t(n);
  }
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(temp.c_str(), path.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(temp.c_str());
    throw InputError("cannot write '" + path + "': " + std::strerror(err));
  }
  fsync_path(directory_of(path), O_RDONLY | O_DIRECTORY);
}

std::vector<std::string> keep_newest_files(const std::string& path_prefix,
                                           const std::string& suffix, std::size_t keep) {
  const bool is_directory_prefix = !path_prefix.empty() && path_prefix.back() == '/';
  const std::string directory = is_directory_prefix ? path_prefix : directory_of(path_prefix);
  const std::string name_prefix =
      is_directory_prefix ? std::string() : fs::path(path_prefix).filename().string();

  struct Candidate {
    fs::file_time_type time;
    std::string name;
    fs::path path;
  };
  std::vector<Candidate> candidates;
  std::error_code ec;
  for (fs::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < name_prefix.size() + suffix.size()) continue;
    if (name.compare(0, name_prefix.size(), name_prefix) != 0) continue;
    if (name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    if (name.find(".tmp.") != std::string::npos) continue;
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    const fs::file_time_type time = it->last_write_time(file_ec);
    if (file_ec) continue;  // vanished meanwhile
    candidates.push_back({time, name, it->path()});
  }
  if (ec)
    throw InputError("cannot list directory '" + directory +
                     "' to remove old files: " + ec.message());
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return a.time != b.time ? a.time > b.time : a.name > b.name;  // newest first
  });
  std::vector<std::string> deleted;
  for (std::size_t i = keep; i < candidates.size(); ++i) {
    std::error_code remove_ec;
    if (fs::remove(candidates[i].path, remove_ec))
      deleted.push_back(candidates[i].path.string());
    else if (remove_ec)
      throw InputError("cannot delete old file '" + candidates[i].path.string() +
                       "': " + remove_ec.message());
  }
  return deleted;
}

}  // namespace hpt::io
