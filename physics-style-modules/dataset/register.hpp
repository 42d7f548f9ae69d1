#pragma once
// The dataset styles (xor, spirals, teacher, digits, hdf5) and their deck options ([dataset]).
//
// File styles need their file read, and modules do not include io, so the app hands a loader over:
//   register_dataset_styles(registry, hpt::io::read_dataset_file);
// The loader gets the style name ("digits" or "hdf5") and the resolved, existing path, and returns
// the rows (it throws InputError for a bad file). Without a loader the file styles throw
// InternalError.
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/config.hpp"
#include "core/registry.hpp"
#include "physics-style-modules/dataset/dataset.hpp"
#include "core/raw_data.hpp"

namespace hpt {

using DatasetFileLoader = std::function<RawData(const std::string& style, const std::string& path)>;
// The (rows, columns) that a data file's /X declares, read without the data (memory estimates).
using DatasetShapeReader = std::function<std::pair<long, long>(const std::string& path)>;

void declare_dataset_options(OptionSchema& schema);

// `shape` lets the hdf5 style report its memory need; without it the style reports none.
void register_dataset_styles(Registry<Dataset>& registry, DatasetFileLoader loader = {},
                             DatasetShapeReader shape = {});

// The file the configured style reads (digits: dataset.path or the run/setup default), checked to
// exist; empty for generated styles. Throws InputError, so the app can check it before Kokkos
// starts.
std::string dataset_file_path(const Config& config);

}  // namespace hpt
