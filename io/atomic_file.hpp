#pragma once
// Writing HDF5 files so that a reader never sees a half-written one: write into a temporary beside
// the target, then fsync and rename it into place (rename is atomic on POSIX file systems).
#include <cstddef>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"

namespace hpt::io {

// What the temporary of an AtomicH5Writer starts as.
enum class AtomicStart {
  Empty,          // a new, empty HDF5 file
  CopyOfExisting  // a copy of the file at the target path, opened read-write (to extend it)
};

class AtomicH5Writer {
 public:
  // Creates the temporary "<path>.tmp.<pid>" in the target's directory; an existing file at `path`
  // stays untouched until commit(). InputError when the temporary cannot be created or, with
  // CopyOfExisting, when `path` is missing or not a readable HDF5 file.
  explicit AtomicH5Writer(const std::string& path, AtomicStart start = AtomicStart::Empty);
  // Without commit() (exception, early return): closes and deletes the temporary.
  ~AtomicH5Writer();
  AtomicH5Writer(const AtomicH5Writer&) = delete;
  AtomicH5Writer& operator=(const AtomicH5Writer&) = delete;

  H5File& file() { return file_; }  // write into this; do not close it yourself
  const std::string& path() const { return path_; }
  const std::string& temp_path() const { return temp_path_; }
  bool committed() const { return committed_; }

  // Closes the file (flushing it), fsyncs it, renames it over `path` and fsyncs the directory.
  // InputError when any step fails (the temporary is then deleted by the destructor).
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  H5File file_;
  bool committed_ = false;
};

// Writes `text` to "<path>.tmp.<pid>", fsyncs it and renames it over `path`; InputError naming the
// file when any step fails (the temporary is then removed).
void write_text_file_atomically(const std::string& path, const std::string& text);

// Keeps the `keep` newest files whose names start with the file-name part of `path_prefix` and end
// with `suffix`, in the directory part of `path_prefix` (e.g. "out/ckpt_", ".h5"), and deletes the
// others. Newest = latest modification time, ties broken by the larger name. Temporaries of
// AtomicH5Writer (".tmp." in the name) are never counted or deleted. Call it only after commit(),
// so the new file exists before old ones go. Returns the deleted paths.
std::vector<std::string> keep_newest_files(const std::string& path_prefix,
                                           const std::string& suffix, std::size_t keep);

}  // namespace hpt::io
