#include "io/dynamics_model_file.hpp"

#include <cmath>
#include <map>
#include <vector>

#include "core/checksum.hpp"
#include "io/atomic_file.hpp"
#include "io/declared_size.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"

namespace hpt::io {

namespace {

const char* reset_name(GruReset r) {
  return r == GruReset::After ? "after" : "before";
}

// The model file's checksum: FNV-1a over every tensor's values as double, tensors in name order,
// so it does not depend on the precision of the build that wrote the file.
std::uint64_t tensors_checksum(const std::map<std::string, std::vector<double>>& tensors) {
  std::uint64_t h = kChecksumStart;
  for (const auto& [name, values] : tensors) {
    h = fnv1a(h, name.data(), name.size());
    h = fnv1a(h, values.data(), values.size() * sizeof(double));
  }
  return h;
}

}  // namespace

void save_model_file(const Dynamics& dynamics, const std::string& path, const std::string& deck) {
  AtomicH5Writer writer(path);
  H5File& file = writer.file();
  write_hpt_header(file, HptFileKind::Model, deck);
  H5Group group = file.root().create_group("dynamics");
  group.write_string_attribute("style", dynamics.style());
  group.write_int_attribute("members", dynamics.members());
  group.write_int_attribute("hidden", dynamics.hidden());
  group.write_int_attribute("stochastic", dynamics.stochastic());
  group.write_int_attribute("input", dynamics.input());
  group.write_string_attribute("gru_reset", reset_name(dynamics.gru_reset()));
  std::map<std::string, std::vector<double>> tensors;
  dynamics.for_each_parameter([&](const std::string& name, const ParameterSpan& data,
                                  const std::vector<std::size_t>& shape) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
    group.write_dataset(name, h5_element_of<real>, host.data(), shape);
    tensors[name].assign(host.data(), host.data() + host.span());
  });
  group.write_int_attribute("checksum", std::int64_t(tensors_checksum(tensors)));
  writer.commit();
}

namespace {

void check_model_file_contents(const std::string& path, const std::string& key,
                               const Config& config) {
  H5File file = [&] {
    try {
      return open_hpt_file(path, HptFileKind::Model);
    } catch (const InputError& e) {
      throw InputError(key + " = '" + path + "': " + e.what());
    }
  }();
  const H5Group group = file.root().open_group("dynamics");
  auto expect = [&](const char* attr, long deck_value, const std::string& deck_key) {
    const long stored = long(group.read_int_attribute(attr));
    if (stored != deck_value)
      throw InputError(key + " = '" + path + "' holds a model with " + attr + " = " +
                       std::to_string(stored) + " but the deck has " + deck_key + " = " +
                       std::to_string(deck_value) + " (set them equal)");
  };
  expect("members", config.get_int("dynamics.members"), "dynamics.members");
  expect("hidden", config.get_int("dynamics.hidden"), "dynamics.hidden");
  expect("stochastic", config.get_int("dynamics.stochastic"), "dynamics.stochastic");
  const std::string reset = group.read_string_attribute("gru_reset");
  if (reset != config.get_string("gru.reset"))
    throw InputError(key + " = '" + path + "' holds a model with gru.reset = " + reset +
                     " but the deck has gru.reset = " + config.get_string("gru.reset"));

  // Every tensor finite, and the contents those the file was written with.
  std::map<std::string, std::vector<double>> tensors;
  for (const std::string& name : group.list_datasets()) {
    const H5Dataset d = group.open_dataset(name);
    const std::vector<std::size_t> shape = d.shape();
    std::size_t n = 1;
    for (std::size_t e : shape) n *= e;
    std::vector<double>& v = tensors[name];
    if (d.element_description() == "float32") {  // written by a single-precision build
      std::vector<float> f(n);
      d.read(H5Element::Float32, f.data(), shape);
      v.assign(f.begin(), f.end());
    } else {
      v.resize(n);
      d.read(H5Element::Float64, v.data(), shape);
    }
    for (std::size_t i = 0; i < n; ++i)
      if (!std::isfinite(v[i]))
        throw InputError(key + " = '" + path + "': tensor /dynamics/" + name + " element " +
                         std::to_string(i) + " is " + (std::isnan(v[i]) ? "NaN" : "infinite") +
                         "; expected finite parameters");
  }
  if (!group.has_attribute("checksum"))
    throw InputError(key + " = '" + path +
                     "' has no checksum (written before model files had one); expected a model "
                     "file written by this hpt (write it again with rollout.save_model)");
  if (std::uint64_t(group.read_int_attribute("checksum")) != tensors_checksum(tensors))
    throw InputError(key + " = '" + path +
                     "': its checksum does not match its contents (the file is damaged or was "
                     "edited)");
}

}  // namespace

void check_model_file(const std::string& path, const std::string& key, const Config& config) {
  naming_file_when_too_large(key + " = '" + path + "'",
                             [&] { check_model_file_contents(path, key, config); });
}

void load_model_file(Dynamics& dynamics, const std::string& path) {
  const H5File file = open_hpt_file(path, HptFileKind::Model);
  const H5Group group = file.root().open_group("dynamics");
  dynamics.for_each_parameter([&](const std::string& name, const ParameterSpan& data,
                                  const std::vector<std::size_t>& shape) {
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), data);
    group.read_dataset(name, h5_element_of<real>, host.data(), shape);
    Kokkos::deep_copy(data, host);
  });
}

}  // namespace hpt::io
