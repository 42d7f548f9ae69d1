#include "app/model_file.hpp"

#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"

namespace hpt::app {

namespace {
const char* reset_name(GruReset r) {
  return r == GruReset::After ? "after" : "before";
}
}  // namespace

void save_model_file(const Dynamics& dynamics, const std::string& path, const std::string& deck) {
  io::AtomicH5Writer writer(path);
  io::H5File& file = writer.file();
  io::write_hpt_header(file, io::HptFileKind::Model, deck);
  io::H5Group group = file.root().create_group("dynamics");
  group.write_string_attribute("style", dynamics.style());
  group.write_int_attribute("members", dynamics.members());
  group.write_int_attribute("hidden", dynamics.hidden());
  group.write_int_attribute("stochastic", dynamics.stochastic());
  group.write_int_attribute("input", dynamics.input());
  group.write_string_attribute("gru_reset", reset_name(dynamics.gru_reset()));
  dynamics.for_each_parameter([&](const std::string& name, const ParameterSpan& data,
                                  const std::vector<std::size_t>& shape) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), data);
    group.write_dataset(name, io::h5_element_of<real>, host.data(), shape);
  });
  writer.commit();
}

void check_model_file(const std::string& path, const std::string& key, const Config& config) {
  io::H5File file = [&] {
    try {
      return io::open_hpt_file(path, io::HptFileKind::Model);
    } catch (const InputError& e) {
      throw InputError(key + " = '" + path + "': " + e.what());
    }
  }();
  const io::H5Group group = file.root().open_group("dynamics");
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
}

void load_model_file(Dynamics& dynamics, const std::string& path) {
  const io::H5File file = io::open_hpt_file(path, io::HptFileKind::Model);
  const io::H5Group group = file.root().open_group("dynamics");
  dynamics.for_each_parameter([&](const std::string& name, const ParameterSpan& data,
                                  const std::vector<std::size_t>& shape) {
    auto host = Kokkos::create_mirror_view(Kokkos::HostSpace(), data);
    group.read_dataset(name, io::h5_element_of<real>, host.data(), shape);
    Kokkos::deep_copy(data, host);
  });
}

}  // namespace hpt::app
