#pragma once
// Lines of a CSV file as they come from loggers and experiment trackers: a UTF-8 byte-order mark,
// CRLF or LF line ends, blank lines, quoted fields (RFC 4180: "a, b" and "say ""hi"""), and a last
// line without its newline (a file still being written, or one that lost its end).
#include <fstream>
#include <string>
#include <vector>

namespace hpt::io {

struct CsvLine {
  long number = 0;                  // 1-based line number in the file
  std::vector<std::string> fields;  // unquoted, surrounding blanks removed
  bool complete = true;             // false: the file's last line, without a newline
  bool quote_open = false;          // the line ended inside a quoted field
};

class CsvLines {
 public:
  explicit CsvLines(std::istream& in) : in_(in) {}
  // The next non-blank line; false at the end of the file.
  bool next(CsvLine& line);

 private:
  std::istream& in_;
  long number_ = 0;
};

// A field as a number: the whole text must be one (strtod: "nan", "inf" and out-of-range values as
// +-inf or 0 included); false for an empty or malformed field.
bool parse_real_field(const std::string& text, double& value);
// A field as a decimal integer; false for an empty, malformed or out-of-range field.
bool parse_integer_field(const std::string& text, long long& value);

// Splits one line into fields (quotes removed, blanks around unquoted fields trimmed).
std::vector<std::string> split_csv_fields(const std::string& text, bool& quote_open);

}  // namespace hpt::io
