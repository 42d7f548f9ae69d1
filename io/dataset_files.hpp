#pragma once
// Readers of data set files for the `digits` and `hdf5` dataset styles. Every failure is an
// hpt::InputError naming the file (and the dataset, row or line) and what was expected.
#include <string>

#include "core/raw_data.hpp"

namespace hpt::io {

// A gzip-compressed CSV without header: every line the same number (>= 2) of numeric columns, the
// last one a non-negative integer class label (scikit-learn's digits.csv.gz: 64 pixels, then the
// label). Classes = largest label + 1.
RawData read_digits_csv_gz(const std::string& path);

// An HDF5 file with /X (N x F, float or integer) and /y: an integer /y (N, or N x 1) holds class
// labels
// >= 0 (classification, classes = largest label + 1); a float /y (N, or N x K) holds regression
// targets. No NaN or Inf anywhere.
RawData read_xy_hdf5(const std::string& path);

// The rows and columns /X of an HDF5 data file declares (metadata only, nothing is read), so the
// memory a run needs can be judged before the data are loaded; {0, 0} when the file or /X cannot
// be opened (read_xy_hdf5 then gives the precise message).
struct DeclaredShape {
  long long rows = 0, columns = 0;
};
DeclaredShape declared_x_shape(const std::string& path);

// The file loader that register_dataset_styles expects: "digits" -> read_digits_csv_gz, "hdf5" ->
// read_xy_hdf5.
RawData read_dataset_file(const std::string& style, const std::string& path);

}  // namespace hpt::io
