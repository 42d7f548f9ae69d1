#pragma once
// The state a checkpoint captures, declared once: every device buffer and integer under a path
// ("optimizer/m", "dataset/epoch"), so save, load and the checksum all iterate over one list
// instead of keeping three hand-written lists in step.
#include <Kokkos_Core.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/checksum.hpp"
#include "io/hdf5_file.hpp"
#include "io/hdf5_view.hpp"

namespace hpt::train {

class StateRegistry {
 public:
  // A device (or host) View saved as the dataset at `path`; loaded in place (shapes must agree).
  template <class ViewType>
  void add_view(const std::string& path, const ViewType& view) {
    Entry e;
    e.path = path;
    e.save = [view](io::H5Group& group, const std::string& name) {
      io::write_view(group, name, view);
    };
    e.load = [view](const io::H5Group& group, const std::string& name) {
      io::read_view(group, name, view);
    };
    e.hash = [view](std::uint64_t h) { return fnv1a_view(h, view); };
    entries_.push_back(std::move(e));
  }
  // An integer saved as the attribute `path` (its last component on the group before it).
  void add_int(const std::string& path, std::function<std::int64_t()> get,
               std::function<void(std::int64_t)> set);

  // A double saved as the attribute `path`, bit for bit.
  void add_real(const std::string& path, std::function<double()> get,
                std::function<void(double)> set);

  // A list of numbers saved as the 1-D float64 dataset `path` (every value exact up to 2^53), for
  // host state a component serialises itself (the phase controller, the divergence monitor).
  void add_values(const std::string& path, std::function<std::vector<double>()> get,
                  std::function<void(const std::vector<double>&)> set);

  // A list of integers (a host state machine's fields), saved as add_values saves numbers.
  void add_counts(const std::string& path, std::function<std::vector<std::int64_t>()> get,
                  std::function<void(const std::vector<std::int64_t>&)> set);

  // Writes every entry under `root`.
  void save(io::H5Group& root) const;
  // Reads every entry from `root`; InputError naming the missing or mis-shaped entry.
  void load(const io::H5Group& root) const;
  // FNV-1a over every entry's bytes, in declaration order.
  std::uint64_t checksum() const;

 private:
  struct Entry {
    std::string path;
    std::function<void(io::H5Group&, const std::string&)> save;
    std::function<void(const io::H5Group&, const std::string&)> load;
    std::function<std::uint64_t(std::uint64_t)> hash;
  };
  std::vector<Entry> entries_;
};

}  // namespace hpt::train
