#include "io/hdf5_handle.hpp"

#include "core/error.hpp"

namespace hpt::io {

void silence_hdf5_errors() {
  thread_local bool silenced = false;
  if (!silenced) {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    silenced = true;
  }
}

namespace {

// H5Ewalk2 visits the innermost error first with H5E_WALK_UPWARD; keep that one.
herr_t keep_innermost(unsigned n, const H5E_error2_t* err, void* out) {
  if (n == 0 && err != nullptr && err->desc != nullptr) *static_cast<std::string*>(out) = err->desc;
  return 0;
}

}  // namespace

std::string take_hdf5_error() {
  std::string message;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &message);
  H5Eclear2(H5E_DEFAULT);
  return message;
}

void throw_hdf5_error(const std::string& message) {
  const std::string detail = take_hdf5_error();
  if (detail.empty()) throw InputError(message);
  throw InputError(message + " (HDF5: " + detail + ")");
}

}  // namespace hpt::io
