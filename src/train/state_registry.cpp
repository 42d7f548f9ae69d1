#include "train/state_registry.hpp"

namespace hpt::train {

namespace {

// "a/b/c" -> ("a/b", "c"); "c" -> ("", "c").
std::pair<std::string, std::string> split_path(const std::string& path) {
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return {"", path};
  return {path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

void StateRegistry::add_int(const std::string& path, std::function<std::int64_t()> get,
                            std::function<void(std::int64_t)> set) {
  Entry e;
  e.path = path;
  e.save = [get](io::H5Group& group, const std::string& name) {
    group.write_int_attribute(name, get());
  };
  e.load = [set](const io::H5Group& group, const std::string& name) {
    set(group.read_int_attribute(name));
  };
  e.hash = [get](std::uint64_t h) {
    const std::int64_t v = get();
    return fnv1a(h, &v, sizeof v);
  };
  entries_.push_back(std::move(e));
}

void StateRegistry::add_real(const std::string& path, std::function<double()> get,
                             std::function<void(double)> set) {
  Entry e;
  e.path = path;
  e.save = [get](io::H5Group& group, const std::string& name) {
    group.write_double_attribute(name, get());
  };
  e.load = [set](const io::H5Group& group, const std::string& name) {
    set(group.read_double_attribute(name));
  };
  e.hash = [get](std::uint64_t h) {
    const double v = get();
    return fnv1a(h, &v, sizeof v);
  };
  entries_.push_back(std::move(e));
}

void StateRegistry::add_counts(const std::string& path,
                               std::function<std::vector<std::int64_t>()> get,
                               std::function<void(const std::vector<std::int64_t>&)> set) {
  add_values(
      path,
      [get] {
        const std::vector<std::int64_t> v = get();
        return std::vector<double>(v.begin(), v.end());
      },
      [set](const std::vector<double>& v) { set(std::vector<std::int64_t>(v.begin(), v.end())); });
}

void StateRegistry::add_values(const std::string& path, std::function<std::vector<double>()> get,
                               std::function<void(const std::vector<double>&)> set) {
  Entry e;
  e.path = path;
  e.save = [get](io::H5Group& group, const std::string& name) {
    const std::vector<double> v = get();
    group.write_dataset(name, io::H5Element::Float64, v.data(), {v.size()});
  };
  e.load = [set](const io::H5Group& group, const std::string& name) {
    const io::H5Dataset d = group.open_dataset_checked(name, io::H5Element::Float64, 1);
    std::vector<double> v(d.shape().at(0));
    d.read(io::H5Element::Float64, v.data(), {v.size()});
    set(v);
  };
  e.hash = [get](std::uint64_t h) {
    const std::vector<double> v = get();
    return fnv1a(h, v.data(), v.size() * sizeof(double));
  };
  entries_.push_back(std::move(e));
}

void StateRegistry::save(io::H5Group& root) const {
  for (const Entry& e : entries_) {
    const auto [dir, name] = split_path(e.path);
    io::H5Group group =
        dir.empty() ? root : (root.has_group(dir) ? root.open_group(dir) : root.create_group(dir));
    e.save(group, name);
  }
}

void StateRegistry::load(const io::H5Group& root) const {
  for (const Entry& e : entries_) {
    const auto [dir, name] = split_path(e.path);
    e.load(dir.empty() ? root : root.open_group(dir), name);
  }
}

std::uint64_t StateRegistry::checksum() const {
  std::uint64_t h = kChecksumStart;
  for (const Entry& e : entries_) h = e.hash(h);
  return h;
}

}  // namespace hpt::train
