#pragma once
// An option key as messages quote it.
#include <string>

namespace hpt {

// `key` in single quotes; a key longer than 80 characters (a pasted line) is cut to its start and
// its length, so a message stays one line.
std::string quoted_key(const std::string& key);

}  // namespace hpt
