#pragma once
// The `digits` style (docs/method.md#training-problems): the 8x8 handwritten digits of Debian's
// scikit-learn package data, 1797 rows of 64 pixels (0..16) and a label 0..9, installed by
// run/setup as a gzip CSV. The file is read by io::read_digits_csv_gz (modules do not include io);
// this file finds it and checks its layout.
#include <string>

#include "core/raw_data.hpp"

namespace hpt {

constexpr int kDigitsPixels = 64;
constexpr int kDigitsClasses = 10;

// $HPT_DEPS_DIR/data/digits.csv.gz, or ~/.cache/hpt-deps/data/digits.csv.gz without HPT_DEPS_DIR.
std::string default_digits_path();

// `configured` (dataset.path) or, when empty, the default path; InputError naming the path (and
// run/setup for the default) when the file does not exist.
std::string resolve_digits_path(const std::string& configured);

// Checks the digits layout (64 feature columns, labels in 0..9) and sets 10 classes; InputError
// naming the file otherwise.
void check_digits_layout(RawData& raw);

}  // namespace hpt
