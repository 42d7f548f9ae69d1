#include "io/dataset_files.hpp"

#include <hdf5.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "io/declared_size.hpp"

namespace hpt::io {

namespace {

// ---------------------------------------------------------------- gzip CSV

class GzFile {
 public:
  explicit GzFile(const std::string& path) : f_(gzopen(path.c_str(), "rb")) {}
  ~GzFile() {
    if (f_) gzclose(f_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;
  gzFile get() const { return f_; }

 private:
  gzFile f_;
};

// Reads one line (without the end of line) of any length; false at the end of the file or on error.
bool read_line(gzFile f, std::string& line) {
  line.clear();
  char buf[4096];
  while (gzgets(f, buf, sizeof buf)) {
    line += buf;
    if (!line.empty() && line.back() == '\n') break;
  }
  if (line.empty()) return false;
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  return true;
}

std::string row_text(std::int64_t row) {
  return "row " + std::to_string(row);
}

// Throws when a value is NaN or Inf, naming the file, dataset, row and column (rows and columns
// 0-based).
void check_finite(const std::string& where, const std::vector<double>& v, std::int64_t cols) {
  for (std::size_t i = 0; i < v.size(); ++i)
    if (!std::isfinite(v[i]))
      throw InputError(where + " " + row_text(std::int64_t(i) / cols) + " column " +
                       std::to_string(std::int64_t(i) % cols) + " is " +
                       (std::isnan(v[i]) ? "NaN" : "infinite") + "; expected finite values");
}

// ---------------------------------------------------------------- HDF5

// Owner of one HDF5 identifier.
class Hid {
 public:
  Hid(hid_t id, herr_t (*close)(hid_t)) : id_(id), close_(close) {}
  ~Hid() {
    if (id_ >= 0) close_(id_);
  }
  Hid(const Hid&) = delete;
  Hid& operator=(const Hid&) = delete;
  hid_t get() const { return id_; }
  bool ok() const { return id_ >= 0; }

 private:
  hid_t id_;
  herr_t (*close_)(hid_t);
};

struct Shape {
  int rank = 0;
  hsize_t dims[H5S_MAX_RANK] = {};
  H5T_class_t type_class = H5T_NO_CLASS;
};

std::string dims_text(const Shape& s) {
  std::string t;
  for (int i = 0; i < s.rank; ++i) t += (i ? " x " : "") + std::to_string(s.dims[i]);
  return t;
}

std::string expected_layout() {
  return "expected /X (N x F features, float or double) and /y (N integer labels, or N x K real "
         "targets)";
}

Shape shape_of(hid_t dataset) {
  Shape s;
  Hid space(H5Dget_space(dataset), H5Sclose);
  Hid type(H5Dget_type(dataset), H5Tclose);
  if (!space.ok() || !type.ok()) return s;
  s.rank = H5Sget_simple_extent_ndims(space.get());
  if (s.rank > 0) H5Sget_simple_extent_dims(space.get(), s.dims, nullptr);
  s.type_class = H5Tget_class(type.get());
  return s;
}

template <class T>
void read_all(const std::string& path, hid_t dataset, const char* name, hid_t mem_type,
              std::vector<T>& out) {
  herr_t status = -1;
  H5E_BEGIN_TRY {
    status = H5Dread(dataset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out.data());
  }
  H5E_END_TRY;
  if (status < 0)
    throw InputError(path + ": dataset " + name + " cannot be read as numbers (corrupt file?)");
}

}  // namespace

RawData read_digits_csv_gz(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(path + ": file not found; expected a gzip CSV of feature columns and a label");
  GzFile file(path);
  if (!file.get())
    throw InputError(path + ": cannot be opened: " + std::string(std::strerror(errno)));
  RawData d;
  d.source = path;
  d.task = Task::Classification;
  int columns = -1, max_label = -1;
  std::int64_t line_no = 0;
  std::string line;
  std::vector<double> row;
  while (read_line(file.get(), line)) {
    ++line_no;
    if (line.find_first_not_of(" \t") == std::string::npos) continue;
    const std::string where = path + " line " + std::to_string(line_no);
    row.clear();
    const char* p = line.c_str();
    while (true) {
      char* end = nullptr;
      errno = 0;
      const double v = std::strtod(p, &end);
      const char* stop = end;
      while (*stop == ' ' || *stop == '\t') ++stop;
      if (end == p || (*stop != ',' && *stop != '\0')) {
        const char* comma = std::strchr(p, ',');
        const std::string field = comma ? std::string(p, comma) : std::string(p);
        throw InputError(where + " column " + std::to_string(row.size() + 1) + ": '" + field +
                         "' is not a number; expected numeric CSV without a header");
      }
      if (!std::isfinite(v))
        throw InputError(where + " column " + std::to_string(row.size() + 1) +
                         " is not finite; expected finite values");
      row.push_back(v);
      if (*stop == '\0') break;
      p = stop + 1;
    }
    if (columns < 0) columns = int(row.size());
    if (int(row.size()) != columns)
      throw InputError(where + " has " + std::to_string(row.size()) + " columns; expected " +
                       std::to_string(columns) + " like the first line");
    if (columns < 2)
      throw InputError(where + " has one column; expected feature columns, then a label column");
    const double label = row.back();
    if (label < 0 || label != std::floor(label) || label > double(INT_MAX))
      throw InputError(where + " has label " + std::to_string(label) +
                       " in its last column; expected a non-negative integer class label");
    d.x.insert(d.x.end(), row.begin(), row.end() - 1);
    d.labels.push_back(int(label));
    max_label = std::max(max_label, int(label));
  }
  int zerr = Z_OK;
  const char* zmsg = gzerror(file.get(), &zerr);
  if (zerr != Z_OK && zerr != Z_STREAM_END)
    throw InputError(path + ": cannot be decompressed (" + std::string(zmsg ? zmsg : "?") +
                     "); expected a gzip CSV");
  if (d.labels.empty()) throw InputError(path + ": has no data lines; expected a gzip CSV");
  d.rows = std::int64_t(d.labels.size());
  d.features = columns - 1;
  d.outputs = max_label + 1;
  return d;
}

namespace {

RawData read_xy_hdf5_file(const std::string& path) {
  if (!std::filesystem::is_regular_file(path))
    throw InputError(path + ": file not found; " + expected_layout());
  htri_t is_hdf5 = -1;
  H5E_BEGIN_TRY {
    is_hdf5 = H5Fis_hdf5(path.c_str());
  }
  H5E_END_TRY;
  if (is_hdf5 <= 0) throw InputError(path + ": not an HDF5 file; " + expected_layout());
  hid_t fid = -1;
  H5E_BEGIN_TRY {
    fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  }
  H5E_END_TRY;
  Hid file(fid, H5Fclose);
  if (!file.ok()) throw InputError(path + ": cannot be opened as HDF5 (truncated or damaged?)");

  auto open = [&](const char* name) {
    hid_t id = -1;
    H5E_BEGIN_TRY {
      if (H5Lexists(file.get(), name, H5P_DEFAULT) > 0)
        id = H5Dopen2(file.get(), name, H5P_DEFAULT);
    }
    H5E_END_TRY;
    if (id < 0) throw InputError(path + ": has no dataset " + name + "; " + expected_layout());
    return id;
  };
  Hid x_set(open("/X"), H5Dclose);
  Hid y_set(open("/y"), H5Dclose);
  const Shape xs = shape_of(x_set.get()), ys = shape_of(y_set.get());

  // /X: N x F numbers.
  if (xs.rank != 2)
    throw InputError(path + ": dataset /X has rank " + std::to_string(xs.rank) + " (" +
                     dims_text(xs) + "); expected rank 2 (N x F)");
  if (xs.type_class != H5T_FLOAT && xs.type_class != H5T_INTEGER)
    throw InputError(path + ": dataset /X does not hold numbers; expected float or double");
  if (xs.dims[0] == 0 || xs.dims[1] == 0)
    throw InputError(path + ": dataset /X is empty (" + dims_text(xs) + "); expected N x F >= 1");
  if (xs.dims[1] > hsize_t(INT_MAX) || xs.dims[0] > hsize_t(INT64_MAX) / xs.dims[1])
    throw InputError(path + ": dataset /X declares " + dims_text(xs) +
                     " values, more than one process can address; expected N x F with F < 2^31");
  RawData d;
  d.source = path;
  d.rows = std::int64_t(xs.dims[0]);
  d.features = int(xs.dims[1]);
  check_declared_bytes(path, double(xs.dims[0]) * double(xs.dims[1]) * sizeof(double));
  d.x.resize(std::size_t(xs.dims[0] * xs.dims[1]));
  read_all(path, x_set.get(), "/X", H5T_NATIVE_DOUBLE, d.x);
  check_finite(path + ": dataset /X", d.x, d.features);

  // /y: integer labels (N or N x 1) or real targets (N or N x K).
  const bool integer = ys.type_class == H5T_INTEGER;
  if (ys.type_class != H5T_INTEGER && ys.type_class != H5T_FLOAT)
    throw InputError(path + ": dataset /y does not hold numbers; " + expected_layout());
  if (ys.rank < 1 || ys.rank > 2 || (integer && ys.rank == 2 && ys.dims[1] != 1))
    throw InputError(path + ": dataset /y has rank " + std::to_string(ys.rank) + " (" +
                     dims_text(ys) + "); expected " +
                     (integer ? "rank 1 (N integer labels)" : "rank 1 or 2 (N x K real targets)"));
  if (ys.dims[0] != xs.dims[0])
    throw InputError(path + ": datasets /X and /y disagree on N: /X has " +
                     std::to_string(xs.dims[0]) + " rows, /y has " + std::to_string(ys.dims[0]) +
                     "; expected one /y entry per /X row");
  if (integer) {
    std::vector<long long> labels(std::size_t(ys.dims[0]));
    read_all(path, y_set.get(), "/y", H5T_NATIVE_LLONG, labels);
    long long max_label = 0;
    for (std::size_t r = 0; r < labels.size(); ++r) {
      if (labels[r] < 0 || labels[r] >= INT_MAX)
        throw InputError(path + ": dataset /y " + row_text(std::int64_t(r)) + " has label " +
                         std::to_string(labels[r]) + "; expected class labels >= 0");
      max_label = std::max(max_label, labels[r]);
    }
    d.task = Task::Classification;
    d.labels.assign(labels.begin(), labels.end());
    d.outputs = int(max_label) + 1;
  } else {
    d.task = Task::Regression;
    if (ys.rank == 2 && ys.dims[1] > hsize_t(INT_MAX))  // int(dims[1]) would wrap
      throw InputError(path + ": dataset /y has " + std::to_string(ys.dims[1]) +
                       " target columns; expected at most " + std::to_string(INT_MAX));
    if (ys.rank == 2 && (ys.dims[1] > hsize_t(INT_MAX) ||
                         (ys.dims[1] > 0 && ys.dims[0] > hsize_t(INT64_MAX) / ys.dims[1])))
      throw InputError(path + ": dataset /y declares " + dims_text(ys) +
                       " values, more than one process can address; expected N x K with K < 2^31");
    d.outputs = ys.rank == 2 ? int(ys.dims[1]) : 1;
    if (d.outputs == 0)
      throw InputError(path + ": dataset /y has no target columns (" + dims_text(ys) + ")");
    check_declared_bytes(path, double(d.rows) * double(d.outputs) * sizeof(double));
    d.targets.resize(std::size_t(d.rows) * std::size_t(d.outputs));
    read_all(path, y_set.get(), "/y", H5T_NATIVE_DOUBLE, d.targets);
    check_finite(path + ": dataset /y", d.targets, d.outputs);
  }
  return d;
}

}  // namespace

RawData read_xy_hdf5(const std::string& path) {
  return naming_file_when_too_large(path, [&] { return read_xy_hdf5_file(path); });
}

DeclaredShape declared_x_shape(const std::string& path) {
  DeclaredShape out;
  if (!std::filesystem::is_regular_file(path)) return out;
  hid_t fid = -1, xid = -1;
  H5E_BEGIN_TRY {
    if (H5Fis_hdf5(path.c_str()) > 0) fid = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (fid >= 0 && H5Lexists(fid, "/X", H5P_DEFAULT) > 0) xid = H5Dopen2(fid, "/X", H5P_DEFAULT);
  }
  H5E_END_TRY;
  Hid file(fid, H5Fclose);
  Hid x_set(xid, H5Dclose);
  if (!x_set.ok()) return out;
  const Shape xs = shape_of(x_set.get());
  if (xs.rank == 2) out = {(long long)xs.dims[0], (long long)xs.dims[1]};
  return out;
}

RawData read_dataset_file(const std::string& style, const std::string& path) {
  if (style == "digits") return read_digits_csv_gz(path);
  if (style == "hdf5") return read_xy_hdf5(path);
  throw InternalError("read_dataset_file: style '" + style + "' reads no file");
}

}  // namespace hpt::io
