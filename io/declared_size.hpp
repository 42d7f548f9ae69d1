#pragma once
// Readers allocate what a file declares (rows, runs, steps, weights). A damaged or hostile file can
// declare more than the machine has; the allocation then fails, and the message must name the file,
// not the deck.
#include <new>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hpt::io {

// The InputError naming `path` for sizes this machine cannot hold.
[[noreturn]] void throw_too_large(const std::string& path);

// Throws it when `bytes` exceeds this machine's physical memory: where the kernel
// overcommits, such an allocation succeeds and the process is killed when it fills it, so a
// failure to allocate cannot be relied on. Unknown physical memory: no check.
void check_declared_bytes(const std::string& path, double bytes);

// Runs `read()`; an allocation failure inside it becomes an InputError naming `path`.
template <class Read>
auto naming_file_when_too_large(const std::string& path, Read&& read) -> decltype(read()) {
  try {
    return std::forward<Read>(read)();
  } catch (const std::bad_alloc&) {
    throw_too_large(path);
  }
}

}  // namespace hpt::io
