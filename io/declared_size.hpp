#pragma once
// Readers allocate what a file declares (rows, runs, steps, weights). A damaged or hostile file can
// declare more than the machine has; the allocation then fails, and the message must name the file,
// not the deck.
#include <new>
#include <string>
#include <utility>

#include "core/error.hpp"

namespace hpt::io {

// Runs `read()`; an allocation failure inside it becomes an InputError naming `path`.
template <class Read>
auto naming_file_when_too_large(const std::string& path, Read&& read) -> decltype(read()) {
  try {
    return std::forward<Read>(read)();
  } catch (const std::bad_alloc&) {
    throw InputError(path +
                     ": the sizes this file declares need more memory than this machine gives "
                     "(a damaged file, or one too large for this machine)");
  }
}

}  // namespace hpt::io
