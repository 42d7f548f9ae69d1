#include "io/declared_size.hpp"

#include <unistd.h>

namespace hpt::io {

void throw_too_large(const std::string& path) {
  throw InputError(path +
                   ": the sizes this file declares need more memory than this machine gives "
                   "(a damaged file, or one too large for this machine)");
}

void check_declared_bytes(const std::string& path, double bytes) {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0 && bytes > double(pages) * double(page)) throw_too_large(path);
}

}  // namespace hpt::io
