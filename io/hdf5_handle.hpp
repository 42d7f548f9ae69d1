#pragma once
// RAII owners of HDF5 identifiers (hid_t): one move-only owner per kind of object, each closing its
// id with the matching H5?close, so no path (exception, early return) leaks an id or leaves a file
// open. HDF5's automatic error printing is switched off; failures become exceptions
// (hpt::InputError).
#include <hdf5.h>

#include <string>

namespace hpt::io {

// Turns HDF5's automatic error printing off for the calling thread (the library is built
// thread-safe, where that setting is per thread). Idempotent and cheap; every entry point of the
// HDF5 layer calls it.
void silence_hdf5_errors();

// The innermost message on this thread's HDF5 error stack (e.g. "truncated file: eof = 512, ..."),
// empty when the stack is empty; clears the stack.
std::string take_hdf5_error();

// Throws hpt::InputError(message), with HDF5's innermost error message appended when there is one.
[[noreturn]] void throw_hdf5_error(const std::string& message);

// Owns one id and closes it with Close; move-only. Predefined ids (H5T_NATIVE_*) must not be owned.
template <herr_t (*Close)(hid_t)>
class H5Owner {
 public:
  H5Owner() = default;
  explicit H5Owner(hid_t id) : id_(id) {}
  ~H5Owner() { reset(); }
  H5Owner(const H5Owner&) = delete;
  H5Owner& operator=(const H5Owner&) = delete;
  H5Owner(H5Owner&& other) noexcept : id_(other.release()) {}
  H5Owner& operator=(H5Owner&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = other.release();
    }
    return *this;
  }

  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }
  explicit operator bool() const { return valid(); }

  // Gives up ownership without closing.
  hid_t release() {
    const hid_t id = id_;
    id_ = H5I_INVALID_HID;
    return id;
  }
  // Closes now; returns false when HDF5 reports a failure (for files: the final flush failed).
  bool close() {
    if (id_ < 0) return true;
    const hid_t id = release();
    return Close(id) >= 0;
  }
  // Closes, ignoring failures (a destructor cannot report them; an id made stale by closing its
  // file with H5F_CLOSE_STRONG is expected to fail here).
  void reset() {
    if (id_ >= 0) {
      Close(id_);
      H5Eclear2(H5E_DEFAULT);
    }
    id_ = H5I_INVALID_HID;
  }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using H5FileId = H5Owner<H5Fclose>;
using H5GroupId = H5Owner<H5Gclose>;
using H5DatasetId = H5Owner<H5Dclose>;
using H5DataspaceId = H5Owner<H5Sclose>;
using H5DatatypeId = H5Owner<H5Tclose>;
using H5AttributeId = H5Owner<H5Aclose>;
using H5PropertyListId = H5Owner<H5Pclose>;
using H5ObjectId = H5Owner<H5Oclose>;  // a group or dataset opened without knowing which (H5Oopen)

}  // namespace hpt::io
