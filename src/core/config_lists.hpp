#pragma once
// Comma-separated lists in deck values (forecast.horizons, compare.seeds, predict.step_scales,
// ...).
#include <string>
#include <vector>

namespace hpt {

// The items of "a, b,c" with surrounding blanks removed; empty items are dropped.
std::vector<std::string> split_list(const std::string& list);
// Parses "1,1024" into positive integers; InputError naming `key` and a valid `example` otherwise.
std::vector<long> parse_positive_list(const std::string& list, const std::string& key,
                                      const std::string& example);
// Parses "0.5,1,2" into positive finite reals (at least one); InputError naming `key` and a valid
// `example` otherwise.
std::vector<double> parse_positive_reals(const std::string& list, const std::string& key,
                                         const std::string& example);

}  // namespace hpt
