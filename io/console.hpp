#pragma once
// Console output: the run header, aligned tables, progress lines.
#include <string>
#include <vector>

namespace hpt::io {

// A plain aligned text table (also written as CSV by the caller when asked).
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add_row(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;
  std::string csv() const;
  const std::vector<std::vector<std::string>>& rows() const { return rows_; }
  const std::vector<std::string>& header() const { return header_; }

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Number formatting used in tables: `digits` significant digits, no trailing noise.
std::string fmt(double v, int digits = 4);

// "hpt 0.1.0 (abc) | backend OpenMP (2 threads) | precision float | Kokkos 3.4.1"
std::string backend_description();
// `devices`: lines on the GPU of each process (app/device_placement), none on a CPU backend.
std::string run_header(const std::string& deck_path, const std::string& resolved_ini,
                       const std::vector<std::string>& devices = {});

}  // namespace hpt::io
