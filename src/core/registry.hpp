#pragma once
// Style registry (docs/architecture.md#styles): a family maps names to factories. Registration is
// explicit, one function per family, so nothing goes missing when linking static libraries.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"

namespace hpt {

class Config;

template <class Base>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(const Config&)>;

  explicit Registry(std::string family) : family_(std::move(family)) {}

  void add(const std::string& name, Factory factory, std::string description) {
    HPT_REQUIRE(entries_.count(name) == 0, family_ + " style '" + name + "' registered twice");
    entries_[name] = Entry{std::move(factory), std::move(description)};
  }

  // Builds the named style; an unknown name is an input error listing the known ones.
  std::unique_ptr<Base> create(const std::string& name, const Config& config) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.first;
      throw InputError(family_ + ".style = '" + name + "' is not a known " + family_ +
                       " style (known: " + known + ")");
    }
    return it->second.factory(config);
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.first);
    return out;
  }
  const std::string& description(const std::string& name) const {
    return entries_.at(name).description;
  }
  const std::string& family() const { return family_; }

 private:
  struct Entry {
    Factory factory;
    std::string description;
  };
  std::string family_;
  std::map<std::string, Entry> entries_;
};

}  // namespace hpt
