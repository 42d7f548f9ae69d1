#pragma once
// Reading an input deck: INI sections via Boost.Program_options, then `--set section.key=value`
// overrides, validated against the option schema (exit 2 on anything wrong, before any work).
#include <string>
#include <vector>

#include "core/config.hpp"

namespace hpt::io {

// Decks are small text files; a larger "deck" is almost surely the wrong file (e.g. /dev/zero).
constexpr unsigned long kMaxDeckBytes = 1UL << 20;

// Reads `path` (a readable regular file of at most kMaxDeckBytes) into a Config over `schema`,
// then applies `overrides` ("section.key=value"). A leading UTF-8 byte-order mark is skipped; a NUL
// byte anywhere is refused.
Config read_deck(const OptionSchema& schema, const std::string& path,
                 const std::vector<std::string>& overrides);

// Same from deck text already in memory (`origin` names it in messages).
Config parse_deck_text(const OptionSchema& schema, const std::string& text,
                       const std::string& origin, const std::vector<std::string>& overrides);

}  // namespace hpt::io
