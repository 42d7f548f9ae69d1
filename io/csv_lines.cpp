#include "io/csv_lines.hpp"

#include <cerrno>
#include <cstdlib>

namespace hpt::io {

namespace {

std::string trim_blanks(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

std::vector<std::string> split_csv_fields(const std::string& text, bool& quote_open) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"', ++i;  // an escaped quote
      } else if (ch == '"') {
        quoted = false;
      } else {
        field += ch;
      }
    } else if (ch == '"' && field.find_first_not_of(" \t") == std::string::npos) {
      quoted = true, was_quoted = true, field.clear();
    } else if (ch == ',') {
      out.push_back(was_quoted ? field : trim_blanks(field));
      field.clear(), was_quoted = false;
    } else if (!(was_quoted && (ch == ' ' || ch == '\t'))) {
      field += ch;
    }
  }
  out.push_back(was_quoted ? field : trim_blanks(field));
  quote_open = quoted;
  return out;
}

bool CsvLines::next(CsvLine& line) {
  std::string text;
  while (std::getline(in_, text)) {
    ++number_;
    const bool complete = !in_.eof();  // getline stopped at a newline, not at the end of the file
    if (number_ == 1 && text.compare(0, 3, "\xEF\xBB\xBF") == 0) text.erase(0, 3);
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (trim_blanks(text).empty()) continue;
    line.number = number_;
    line.complete = complete;
    line.fields = split_csv_fields(text, line.quote_open);
    return true;
  }
  return false;
}

bool parse_real_field(const std::string& text, double& value) {
  if (text.empty()) return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool parse_integer_field(const std::string& text, long long& value) {
  if (text.empty()) return false;
  errno = 0;
  char* end = nullptr;
  value = std::strtoll(text.c_str(), &end, 10);
  return end == text.c_str() + text.size() && errno != ERANGE;
}

}  // namespace hpt::io
