#pragma once
// Style registry (docs/architecture.md#styles): a family maps names to factories. Registration is
// explicit, one function per family, so nothing goes missing when linking static libraries. A
// factory gets the configuration and, for families built from more than it (step policies), the
// objects named by Args.
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/config.hpp"
#include "core/error.hpp"
#include "core/memory_need.hpp"

namespace hpt {

template <class Base, class... Args>
class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Base>(const Config&, Args...)>;
  // What a style will allocate for a deck, reported before Kokkos starts (optional).
  using MemoryReport = std::function<MemoryNeed(const Config&)>;

  // `key`: the deck key that selects the style (default <family>.style), named in errors.
  explicit Registry(std::string family, std::string key = "")
      : family_(std::move(family)), key_(key.empty() ? family_ + ".style" : std::move(key)) {}

  void add(const std::string& name, Factory factory, std::string description,
           MemoryReport memory = {}) {
    HPT_REQUIRE(entries_.count(name) == 0, family_ + " style '" + name + "' registered twice");
    entries_[name] = Entry{std::move(factory), std::move(description), std::move(memory)};
  }

  // Builds the named style; an unknown name is an input error listing the known ones.
  std::unique_ptr<Base> create(const std::string& name, const Config& config, Args... args) const {
    auto it = entries_.find(name);
    if (it == entries_.end()) {
      std::string known;
      for (const auto& e : entries_) known += (known.empty() ? "" : ", ") + e.first;
      throw InputError(key_ + " = '" + name + "' is not a known " + family_ +
                       " style (known: " + known + ")");
    }
    return it->second.factory(config, std::forward<Args>(args)...);
  }

  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : entries_) out.push_back(e.first);
    return out;
  }
  const std::string& description(const std::string& name) const {
    return entries_.at(name).description;
  }
  // The named style's report for `config`; nothing for an unknown style or one without a report.
  MemoryNeed memory_need(const std::string& name, const Config& config) const {
    auto it = entries_.find(name);
    if (it == entries_.end() || !it->second.memory) return {};
    return it->second.memory(config);
  }
  const std::string& family() const { return family_; }
  const std::string& key() const { return key_; }

 private:
  struct Entry {
    Factory factory;
    std::string description;
    MemoryReport memory;
  };
  std::string family_, key_;
  std::map<std::string, Entry> entries_;
};

// Declares <family>.style with the names `register_styles` registers as its choices: a style name
// is written once, where the style is registered.
template <class Base>
void add_style_choice(OptionSchema& schema, const std::string& family, const std::string& fallback,
                      void (*register_styles)(Registry<Base>&), const std::string& help) {
  Registry<Base> styles(family);
  register_styles(styles);
  schema.add_choice(family + ".style", fallback, styles.names(), help);
}

}  // namespace hpt
