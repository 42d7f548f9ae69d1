#pragma once
// Datasets that grow along their first dimension (chunked, shuffle + deflate compressed), for
// per-step traces and event logs, and a "table": a group of 1-D growing columns (float64 or int64)
// appended row by row, so a trace opens in h5py as plain arrays (f["trace/loss"][:]).
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

#include "core/error.hpp"
#include "io/hdf5_file.hpp"

namespace hpt::io {

// A dataset of shape (rows, row_shape...) with an unlimited first dimension.
class H5Appendable {
 public:
  H5Appendable() = default;
  // Creates dataset `name` in `group` with no rows. `row_shape` {} makes a 1-D dataset of scalars.
  // A chunk holds `chunk_rows` rows (fewer when a row is large: chunks stay near 1 MiB);
  // `deflate_level` 0 disables compression (also used when the HDF5 build lacks zlib).
  static H5Appendable create(H5Group& group, const std::string& name, H5Element element,
                             const std::vector<std::size_t>& row_shape,
                             std::size_t chunk_rows = 1024, int deflate_level = 4);
  // Opens an existing appendable dataset (e.g. to continue a trace after a restart).
  static H5Appendable open(const H5Group& group, const std::string& name, H5Element element);

  // Appends `n_rows` rows stored contiguously at `rows` (n_rows * row_size() values).
  template <class T>
  void append(const T* rows, std::size_t n_rows) {
    append_raw(h5_element_of<T>, rows, n_rows);
  }
  // Appends whole rows; rows.size() must be a multiple of row_size().
  template <class T>
  void append(const std::vector<T>& rows) {
    HPT_REQUIRE(row_size() > 0 && rows.size() % row_size() == 0,
                "H5Appendable::append: " + std::to_string(rows.size()) +
                    " values are not whole rows of " + std::to_string(row_size()));
    append_raw(h5_element_of<T>, rows.data(), rows.size() / row_size());
  }
  void append_raw(H5Element element, const void* rows, std::size_t n_rows);

  // Keeps the first `rows` rows (shrinks, e.g. to the step of a checkpoint on restart) or grows
  // with zero rows.
  void resize(std::size_t rows);

  std::size_t rows() const { return rows_; }
  std::size_t row_size() const;  // values per row
  const std::vector<std::size_t>& row_shape() const { return row_shape_; }
  H5Element element() const { return element_; }
  H5Dataset& dataset() { return dataset_; }
  const H5Dataset& dataset() const { return dataset_; }

 private:
  H5Dataset dataset_;
  H5Element element_ = H5Element::Float64;
  std::vector<std::size_t> row_shape_;
  std::size_t rows_ = 0;
};

// One column of an H5Table: float64 or int64 values.
struct H5Column {
  std::string name;
  H5Element element = H5Element::Float64;
};

// One cell of a table row: an integer or a floating-point number (converted to the column's type;
// a non-integer value for an int64 column is an internal error).
class H5TableValue {
 public:
  template <class T, std::enable_if_t<std::is_arithmetic<T>::value, int> = 0>
  H5TableValue(T value)  // NOLINT(google-explicit-constructor): rows are written as {1, 0.5, ...}
      : is_integer_(std::is_integral<T>::value),
        integer_(std::is_integral<T>::value ? static_cast<std::int64_t>(value) : 0),
        real_(static_cast<double>(value)) {}

  bool is_integer() const { return is_integer_; }
  std::int64_t integer() const { return integer_; }
  double real() const { return real_; }

 private:
  bool is_integer_;
  std::int64_t integer_;
  double real_;
};

// A group of equally long 1-D columns, appended a row at a time. Rows are buffered in memory and
// written every `chunk_rows` rows and on flush(). Call flush() before closing the file: the
// destructor flushes too, but can only warn on stderr when that fails (e.g. file already closed).
class H5Table {
 public:
  H5Table() = default;
  ~H5Table();
  H5Table(H5Table&& other) noexcept;
  H5Table& operator=(H5Table&& other) noexcept;  // flushes this table first (best effort)
  H5Table(const H5Table&) = delete;
  H5Table& operator=(const H5Table&) = delete;

  // Creates group `name` in `parent` holding one dataset per column (and the column order as the
  // group's string attribute "hpt_columns", comma-separated).
  static H5Table create(H5Group& parent, const std::string& name,
                        const std::vector<H5Column>& columns, std::size_t chunk_rows = 1024,
                        int deflate_level = 4);
  // Opens a table written by create() (to continue it); InputError when it is not one.
  static H5Table open(const H5Group& parent, const std::string& name);

  // One value per column, in column order.
  void append_row(std::initializer_list<H5TableValue> values);
  void append_row(const std::vector<H5TableValue>& values);
  void flush();
  // Keeps the first `rows` rows (e.g. those up to a checkpoint's step on restart); flushes first.
  void truncate(std::size_t rows);

  std::size_t rows() const { return written_rows_ + buffered_rows_; }
  const std::vector<H5Column>& columns() const { return columns_; }
  std::size_t column_index(const std::string& name) const;  // InternalError when unknown
  H5Group& group() { return group_; }

 private:
  void append_checked(const H5TableValue* values, std::size_t count);
  void flush_quietly() noexcept;  // flush(), reporting a failure on stderr only
  void take(H5Table& other) noexcept;

  H5Group group_;
  std::vector<H5Column> columns_;
  std::vector<H5Appendable> data_;
  std::vector<std::vector<double>> real_buffer_;           // per float64 column
  std::vector<std::vector<std::int64_t>> integer_buffer_;  // per int64 column
  std::size_t buffered_rows_ = 0;
  std::size_t written_rows_ = 0;
  std::size_t flush_rows_ = 1024;
};

}  // namespace hpt::io
