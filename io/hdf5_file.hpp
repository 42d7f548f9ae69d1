#pragma once
// HDF5 files, groups and datasets as small host classes, with attributes (string, int64, double and
// 1-D numeric vectors) on each. Every failure throws hpt::InputError naming the file and the
// object.
//
// Closing a file (H5File::close or its destructor) closes every group and dataset of it as well
// (H5F_CLOSE_STRONG): keep the H5File alive while its groups and datasets are in use.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "io/hdf5_handle.hpp"

namespace hpt::io {

// Element types of numeric datasets and attributes (stored little-endian IEEE / two's complement).
enum class H5Element { Float32, Float64, Int32, Int64 };

template <class T>
struct H5ElementOf;  // defined for float, double, int and std::int64_t only
template <>
struct H5ElementOf<float> {
  static constexpr H5Element value = H5Element::Float32;
};
template <>
struct H5ElementOf<double> {
  static constexpr H5Element value = H5Element::Float64;
};
template <>
struct H5ElementOf<int> {
  static constexpr H5Element value = H5Element::Int32;
};
template <>
struct H5ElementOf<std::int64_t> {
  static constexpr H5Element value = H5Element::Int64;
};
template <class T>
inline constexpr H5Element h5_element_of = H5ElementOf<std::remove_cv_t<T>>::value;

const char* element_name(H5Element element);  // "float32", "float64", "int32", "int64"
std::size_t element_size(H5Element element);  // bytes
std::string shape_string(const std::vector<std::size_t>& shape);  // "(3, 4)"
hid_t stored_type(H5Element element);  // little-endian file type, e.g. H5T_IEEE_F32LE
hid_t memory_type(H5Element element);  // native type, e.g. H5T_NATIVE_FLOAT

// A group or dataset inside an open file; carries the file's path and its own path for messages.
// Copies share the HDF5 object (each holds a reference to its id); moves transfer it.
class H5Object {
 public:
  H5Object() = default;
  H5Object(H5ObjectId id, std::string file_path, std::string path);
  H5Object(const H5Object& other);
  H5Object& operator=(const H5Object& other);
  H5Object(H5Object&&) noexcept = default;
  H5Object& operator=(H5Object&&) noexcept = default;
  ~H5Object() = default;

  hid_t id() const { return id_.get(); }
  bool valid() const { return id_.valid(); }
  const std::string& file_path() const { return file_path_; }
  const std::string& path() const { return path_; }  // "/", "/model", "/model/w"

  bool has_attribute(const std::string& name) const;
  std::vector<std::string> list_attributes() const;  // sorted
  // Writing replaces an attribute of the same name.
  void write_string_attribute(const std::string& name, const std::string& value);
  void write_int_attribute(const std::string& name, std::int64_t value);
  void write_double_attribute(const std::string& name, double value);
  template <class T>  // T: float, double, int, std::int64_t
  void write_vector_attribute(const std::string& name, const std::vector<T>& values) {
    write_vector_attribute_raw(name, h5_element_of<T>, values.data(), values.size());
  }
  // Reading throws InputError when the attribute is missing or of another kind. Strings may be
  // fixed or variable length; integers of any width are read as int64; double accepts integers too.
  std::string read_string_attribute(const std::string& name) const;
  std::int64_t read_int_attribute(const std::string& name) const;
  double read_double_attribute(const std::string& name) const;
  template <class T>  // the stored element type must be exactly T's
  std::vector<T> read_vector_attribute(const std::string& name) const {
    std::vector<T> values(vector_attribute_size(name, h5_element_of<T>));
    read_vector_attribute_raw(name, h5_element_of<T>, values.data(), values.size());
    return values;
  }

  // Untyped forms of the templates above.
  void write_vector_attribute_raw(const std::string& name, H5Element element, const void* data,
                                  std::size_t count);
  std::size_t vector_attribute_size(const std::string& name, H5Element element) const;
  void read_vector_attribute_raw(const std::string& name, H5Element element, void* data,
                                 std::size_t count) const;

  // "file 'a.h5': dataset '/x'": the prefix of every message about this object.
  std::string describe() const;

 protected:
  H5ObjectId id_;
  std::string file_path_;
  std::string path_;
  // "group" or "dataset", fixed at construction: describe() must not call HDF5, which would clear
  // the error stack before a failure's message is taken from it.
  const char* kind_ = "object";

 private:
  H5AttributeId open_attribute(const std::string& name, const char* expected) const;
};

class H5Dataset : public H5Object {
 public:
  using H5Object::H5Object;

  std::vector<std::size_t> shape() const;   // {} for a scalar dataset
  std::string element_description() const;  // "float32", "int16", "uint8", "string", ...
  // Bytes the file stores for the data (0 when nothing was ever written to it).
  std::uint64_t stored_bytes() const;
  // Throws InputError naming file and dataset when the stored element type or shape differs.
  void check(H5Element element, const std::vector<std::size_t>& shape) const;
  void check_element(H5Element element) const;
  void check_rank(H5Element element, std::size_t rank) const;  // element type and rank only
  // Reads the whole dataset into `data` after check(element, expected_shape).
  void read(H5Element element, void* data, const std::vector<std::size_t>& expected_shape) const;
};

class H5Group : public H5Object {
 public:
  using H5Object::H5Object;

  // Paths are relative to this group ("a/b"), or absolute in the file ("/a/b").
  bool has_group(const std::string& path) const;
  bool has_dataset(const std::string& path) const;
  std::vector<std::string> list_datasets() const;  // names directly in this group, sorted
  std::vector<std::string> list_groups() const;    // names directly in this group, sorted

  H5Group open_group(const std::string& path) const;      // InputError when missing
  H5Group create_group(const std::string& path);          // creates missing groups along the path
  H5Dataset open_dataset(const std::string& path) const;  // InputError when missing

  // Writes a whole numeric dataset of the given shape ({} = scalar), replacing one of the same
  // name.
  H5Dataset write_dataset(const std::string& path, H5Element element, const void* data,
                          const std::vector<std::size_t>& shape);
  // Reads a whole dataset; InputError naming file and dataset when missing or of another element
  // type, rank or shape. `expected_shape` also describes what was expected in the message.
  void read_dataset(const std::string& path, H5Element element, void* data,
                    const std::vector<std::size_t>& expected_shape) const;
  // Opens a dataset and checks element type and rank (for reads that take the stored shape).
  H5Dataset open_dataset_checked(const std::string& path, H5Element element,
                                 std::size_t rank) const;

  void remove(const std::string& path);  // unlinks a group or dataset; InputError when missing

  std::string child_path(const std::string& path) const;  // this group's path joined with `path`
};

class H5File {
 public:
  H5File() = default;
  // Creates (truncating an existing file).
  static H5File create(const std::string& path);
  // Opens an existing file. Missing file, directory, not HDF5, truncated or damaged: InputError.
  static H5File open_read(const std::string& path);
  static H5File open_readwrite(const std::string& path);

  bool is_open() const { return file_.valid(); }
  const std::string& path() const { return path_; }
  H5Group& root() { return root_; }
  const H5Group& root() const { return root_; }

  void flush();
  // Flushes and closes (also every group and dataset of the file); InputError when HDF5 cannot
  // write. The destructor closes too but cannot report a failure: call close() where it matters.
  void close();

 private:
  static H5File open(const std::string& path, unsigned flags);
  H5FileId file_;  // declared first: destroyed after root_
  H5Group root_;
  std::string path_;
};

}  // namespace hpt::io
