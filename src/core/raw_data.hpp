#pragma once
// The rows of a data set as read or generated, on the host, before the split: what every dataset
// style produces and what io/dataset_files.hpp returns (a plain struct in core, so modules never
// include io and io never includes modules).
#include <cstdint>
#include <string>
#include <vector>

namespace hpt {

enum class Task { Classification, Regression };

struct RawData {
  std::int64_t rows = 0;
  int features = 0;
  std::vector<double> x;  // rows x features, row-major
  Task task = Task::Classification;
  int outputs = 0;              // classes K (labels in [0, K)) or target columns (regression)
  std::vector<int> labels;      // rows entries (classification only)
  std::vector<double> targets;  // rows x outputs, row-major (regression only)
  std::string source;  // where the rows came from, for messages: a style name or a file path
};

inline const char* task_name(Task t) {
  return t == Task::Classification ? "classification" : "regression";
}

}  // namespace hpt
