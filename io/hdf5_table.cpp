#include "io/hdf5_table.hpp"

#include <algorithm>
#include <iostream>
#include <utility>

namespace hpt::io {

namespace {

constexpr std::size_t kTargetChunkBytes = std::size_t(1) << 20;

std::vector<hsize_t> dims_with_rows(std::size_t rows, const std::vector<std::size_t>& row_shape) {
  std::vector<hsize_t> dims{static_cast<hsize_t>(rows)};
  dims.insert(dims.end(), row_shape.begin(), row_shape.end());
  return dims;
}

std::string join(const std::vector<std::string>& parts, char separator) {
  std::string joined;
  for (std::size_t i = 0; i < parts.size(); ++i)
    joined += (i ? std::string(1, separator) : "") + parts[i];
  return joined;
}

std::vector<std::string> split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    parts.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return parts;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// H5Appendable

H5Appendable H5Appendable::create(H5Group& group, const std::string& name, H5Element element,
                                  const std::vector<std::size_t>& row_shape, std::size_t chunk_rows,
                                  int deflate_level) {
  HPT_REQUIRE(chunk_rows >= 1, "H5Appendable '" + name + "': chunk_rows must be at least 1");
  for (const std::size_t d : row_shape)
    HPT_REQUIRE(d >= 1, "H5Appendable '" + name + "': row shape " + shape_string(row_shape) +
                            " has an empty dimension");
  if (group.has_dataset(name) || group.has_group(name))
    throw InputError("file '" + group.file_path() + "': cannot create '" + group.child_path(name) +
                     "': it exists already");
  const std::size_t slash = name.rfind('/');
  if (slash != std::string::npos && slash > 0) group.create_group(name.substr(0, slash));

  H5Appendable table;
  table.element_ = element;
  table.row_shape_ = row_shape;
  const std::size_t row_bytes = table.row_size() * element_size(element);
  const std::size_t rows_per_chunk =
      std::max<std::size_t>(1, std::min(chunk_rows, kTargetChunkBytes / row_bytes));

  const std::vector<hsize_t> dims = dims_with_rows(0, row_shape);
  std::vector<hsize_t> max_dims = dims;
  max_dims[0] = H5S_UNLIMITED;
  const std::vector<hsize_t> chunk = dims_with_rows(rows_per_chunk, row_shape);
  H5DataspaceId space(
      H5Screate_simple(static_cast<int>(dims.size()), dims.data(), max_dims.data()));
  H5PropertyListId dcpl(H5Pcreate(H5P_DATASET_CREATE));
  H5Pset_obj_track_times(dcpl.get(), 0);
  H5Pset_chunk(dcpl.get(), static_cast<int>(chunk.size()), chunk.data());
  if (deflate_level > 0 && H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0) {
    H5Pset_shuffle(dcpl.get());  // groups bytes of equal significance: floats compress much better
    H5Pset_deflate(dcpl.get(), static_cast<unsigned>(std::min(deflate_level, 9)));
  }
  H5DatasetId dataset(H5Dcreate2(group.id(), name.c_str(), stored_type(element), space.get(),
                                 H5P_DEFAULT, dcpl.get(), H5P_DEFAULT));
  if (!dataset)
    throw_hdf5_error("file '" + group.file_path() + "': cannot create dataset '" +
                     group.child_path(name) + "'");
  dataset.reset();
  table.dataset_ = group.open_dataset(name);
  return table;
}

H5Appendable H5Appendable::open(const H5Group& group, const std::string& name, H5Element element) {
  H5Appendable table;
  table.dataset_ = group.open_dataset(name);
  table.dataset_.check_element(element);
  table.element_ = element;
  H5DataspaceId space(H5Dget_space(table.dataset_.id()));
  const int rank = space ? H5Sget_simple_extent_ndims(space.get()) : -1;
  if (rank < 1) throw InputError(table.dataset_.describe() + " is not an appendable dataset");
  std::vector<hsize_t> dims(rank), max_dims(rank);
  H5Sget_simple_extent_dims(space.get(), dims.data(), max_dims.data());
  if (max_dims[0] != H5S_UNLIMITED)
    throw InputError(table.dataset_.describe() +
                     " is not an appendable dataset (its first dimension is fixed)");
  table.rows_ = dims[0];
  table.row_shape_.assign(dims.begin() + 1, dims.end());
  return table;
}

std::size_t H5Appendable::row_size() const {
  std::size_t n = 1;
  for (const std::size_t d : row_shape_) n *= d;
  return n;
}

void H5Appendable::append_raw(H5Element element, const void* rows, std::size_t n_rows) {
  HPT_REQUIRE(dataset_.valid(), "append to an H5Appendable that was not created or opened");
  HPT_REQUIRE(element == element_, std::string("append of ") + element_name(element) +
                                       " rows to the " + element_name(element_) + " dataset '" +
                                       dataset_.path() + "'");
  if (n_rows == 0) return;
  const std::vector<hsize_t> new_dims = dims_with_rows(rows_ + n_rows, row_shape_);
  if (H5Dset_extent(dataset_.id(), new_dims.data()) < 0)
    throw_hdf5_error(dataset_.describe() + ": cannot grow to " + std::to_string(new_dims[0]) +
                     " rows");
  std::vector<hsize_t> start(new_dims.size(), 0);
  start[0] = rows_;
  const std::vector<hsize_t> count = dims_with_rows(n_rows, row_shape_);
  H5DataspaceId file_space(H5Dget_space(dataset_.id()));
  H5DataspaceId memory_space(
      H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  if (!file_space || !memory_space ||
      H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0 ||
      H5Dwrite(dataset_.id(), memory_type(element), memory_space.get(), file_space.get(),
               H5P_DEFAULT, rows) < 0) {
    const std::string detail = take_hdf5_error();
    const std::vector<hsize_t> old_dims = dims_with_rows(rows_, row_shape_);
    H5Dset_extent(dataset_.id(), old_dims.data());  // best effort: keep the row count consistent
    H5Eclear2(H5E_DEFAULT);
    throw InputError(dataset_.describe() + ": cannot append " + std::to_string(n_rows) +
                     " rows (HDF5: " + detail + ")");
  }
  rows_ += n_rows;
}

void H5Appendable::resize(std::size_t rows) {
  HPT_REQUIRE(dataset_.valid(), "resize of an H5Appendable that was not created or opened");
  const std::vector<hsize_t> dims = dims_with_rows(rows, row_shape_);
  if (H5Dset_extent(dataset_.id(), dims.data()) < 0)
    throw_hdf5_error(dataset_.describe() + ": cannot resize to " + std::to_string(rows) + " rows");
  rows_ = rows;
}

// ---------------------------------------------------------------------------------------------
// H5Table

H5Table::~H5Table() {
  flush_quietly();
}

H5Table::H5Table(H5Table&& other) noexcept {
  take(other);
}

H5Table& H5Table::operator=(H5Table&& other) noexcept {
  if (this != &other) {
    flush_quietly();
    take(other);
  }
  return *this;
}

void H5Table::take(H5Table& other) noexcept {
  group_ = std::move(other.group_);
  columns_ = std::move(other.columns_);
  data_ = std::move(other.data_);
  real_buffer_ = std::move(other.real_buffer_);
  integer_buffer_ = std::move(other.integer_buffer_);
  buffered_rows_ = std::exchange(other.buffered_rows_, 0);
  written_rows_ = std::exchange(other.written_rows_, 0);
  flush_rows_ = other.flush_rows_;
  other.columns_.clear();
  other.data_.clear();
}

void H5Table::flush_quietly() noexcept {
  if (buffered_rows_ == 0) return;
  const std::size_t pending = buffered_rows_;
  try {
    flush();
  } catch (const std::exception& e) {
    std::cerr << "hpt: warning: " << pending << " rows of table '" << group_.path() << "' in file '"
              << group_.file_path() << "' were not written: " << e.what() << "\n";
  }
}

H5Table H5Table::create(H5Group& parent, const std::string& name,
                        const std::vector<H5Column>& columns, std::size_t chunk_rows,
                        int deflate_level) {
  HPT_REQUIRE(!columns.empty(), "H5Table '" + name + "' without columns");
  HPT_REQUIRE(chunk_rows >= 1, "H5Table '" + name + "': chunk_rows must be at least 1");
  std::vector<std::string> names;
  for (const H5Column& c : columns) {
    HPT_REQUIRE(c.element == H5Element::Float64 || c.element == H5Element::Int64,
                "H5Table column '" + c.name + "' must be float64 or int64");
    HPT_REQUIRE(!c.name.empty() && c.name.find_first_of(",/") == std::string::npos,
                "H5Table column name '" + c.name + "' must be non-empty, without ',' or '/'");
    HPT_REQUIRE(std::find(names.begin(), names.end(), c.name) == names.end(),
                "H5Table column '" + c.name + "' given twice");
    names.push_back(c.name);
  }
  if (parent.has_group(name) || parent.has_dataset(name))
    throw InputError("file '" + parent.file_path() + "': cannot create table '" +
                     parent.child_path(name) + "': it exists already");
  H5Table table;
  table.group_ = parent.create_group(name);
  table.group_.write_string_attribute("hpt_columns", join(names, ','));
  table.columns_ = columns;
  for (const H5Column& c : columns)
    table.data_.push_back(
        H5Appendable::create(table.group_, c.name, c.element, {}, chunk_rows, deflate_level));
  table.real_buffer_.resize(columns.size());
  table.integer_buffer_.resize(columns.size());
  table.flush_rows_ = chunk_rows;
  return table;
}

H5Table H5Table::open(const H5Group& parent, const std::string& name) {
  H5Table table;
  table.group_ = parent.open_group(name);
  if (!table.group_.has_attribute("hpt_columns"))
    throw InputError(table.group_.describe() +
                     " is not an hpt table (no 'hpt_columns' attribute listing its columns)");
  for (const std::string& column : split(table.group_.read_string_attribute("hpt_columns"), ',')) {
    const H5Dataset dataset = table.group_.open_dataset(column);
    const std::string type = dataset.element_description();
    if (type != "float64" && type != "int64")
      throw InputError(dataset.describe() + " holds " + type +
                       " values, expected a float64 or int64 table column");
    const H5Element element = type == "float64" ? H5Element::Float64 : H5Element::Int64;
    H5Appendable data = H5Appendable::open(table.group_, column, element);
    if (!data.row_shape().empty())
      throw InputError(dataset.describe() + " has shape " + shape_string(dataset.shape()) +
                       ", expected a 1-D table column");
    if (!table.data_.empty() && data.rows() != table.data_.front().rows())
      throw InputError(table.group_.describe() + ": column '" + column + "' has " +
                       std::to_string(data.rows()) + " rows, column '" +
                       table.columns_.front().name + "' has " +
                       std::to_string(table.data_.front().rows()) +
                       " (damaged table: columns must be equally long)");
    table.columns_.push_back(H5Column{column, element});
    table.data_.push_back(std::move(data));
  }
  table.real_buffer_.resize(table.columns_.size());
  table.integer_buffer_.resize(table.columns_.size());
  table.written_rows_ = table.data_.front().rows();
  return table;
}

void H5Table::append_row(std::initializer_list<H5TableValue> values) {
  append_checked(values.begin(), values.size());
}

void H5Table::append_row(const std::vector<H5TableValue>& values) {
  append_checked(values.data(), values.size());
}

void H5Table::append_checked(const H5TableValue* values, std::size_t count) {
  HPT_REQUIRE(count == columns_.size(), "table '" + group_.path() + "' has " +
                                            std::to_string(columns_.size()) + " columns, row has " +
                                            std::to_string(count) + " values");
  for (std::size_t c = 0; c < count; ++c)
    HPT_REQUIRE(columns_[c].element == H5Element::Float64 || values[c].is_integer(),
                "table '" + group_.path() + "': column '" + columns_[c].name +
                    "' is int64, the row gives a floating-point value");
  for (std::size_t c = 0; c < count; ++c) {
    if (columns_[c].element == H5Element::Int64)
      integer_buffer_[c].push_back(values[c].integer());
    else
      real_buffer_[c].push_back(values[c].real());
  }
  if (++buffered_rows_ >= flush_rows_) flush();
}

void H5Table::flush() {
  if (buffered_rows_ == 0) return;
  for (std::size_t c = 0; c < columns_.size(); ++c) {
    if (columns_[c].element == H5Element::Int64) {
      data_[c].append(integer_buffer_[c]);
      integer_buffer_[c].clear();
    } else {
      data_[c].append(real_buffer_[c]);
      real_buffer_[c].clear();
    }
  }
  written_rows_ += buffered_rows_;
  buffered_rows_ = 0;
}

void H5Table::truncate(std::size_t rows) {
  flush();
  HPT_REQUIRE(rows <= written_rows_, "table '" + group_.path() + "' has " +
                                         std::to_string(written_rows_) + " rows, cannot keep " +
                                         std::to_string(rows));
  for (H5Appendable& column : data_) column.resize(rows);
  written_rows_ = rows;
}

std::size_t H5Table::column_index(const std::string& name) const {
  for (std::size_t c = 0; c < columns_.size(); ++c)
    if (columns_[c].name == name) return c;
  throw InternalError("table '" + group_.path() + "' has no column '" + name + "'");
}

}  // namespace hpt::io
