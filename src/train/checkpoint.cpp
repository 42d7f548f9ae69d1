#include "train/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/checksum.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"

namespace fs = std::filesystem;

namespace hpt::train {

namespace {

// The checksum continued over the bytes of a View's host copy.
template <class ViewType>
std::uint64_t fnv1a(std::uint64_t h, const ViewType& v) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return hpt::fnv1a(h, host.data(), host.span() * sizeof(typename ViewType::value_type));
}

std::uint64_t state_checksum(const TrainState& s) {
  std::uint64_t h = kChecksumStart;
  h = fnv1a(h, s.model.parameters().values());
  for (const auto& b : s.optimizer.state_views()) h = fnv1a(h, b.view);
  h = fnv1a(h, s.history.loss);
  h = fnv1a(h, s.history.other);
  h = fnv1a(h, s.history.scalars);
  if (const auto* n = s.encoder.normalizer()) {
    h = fnv1a(h, n->count);
    h = fnv1a(h, n->mean);
    h = fnv1a(h, n->m2);
    h = fnv1a(h, n->center);
    h = fnv1a(h, n->inv_std);
  }
  return h;
}

std::string tensor_layout(const Model& m) {
  std::string out;
  for (const auto& t : m.parameters().tensors())
    out += t.name + "(" + std::to_string(t.rows) + "x" + std::to_string(t.cols) + ");";
  return out;
}

}  // namespace

std::string checkpoint_path(const std::string& prefix, std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%010lld", static_cast<long long>(step));
  return prefix + "_ckpt_" + buf + ".h5";
}

std::vector<std::string> checkpoints_newest_first(const std::string& prefix) {
  // Newest = latest modification time (ties: larger step), the rule keep_newest_files keeps by, so
  // a run restarted from an older checkpoint continues from its own newest one.
  const fs::path p(prefix);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  const std::string stem = p.filename().string() + "_ckpt_";
  std::vector<std::pair<fs::file_time_type, std::string>> found;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(stem, 0) != 0 || name.size() < 3 || name.substr(name.size() - 3) != ".h5" ||
        name.find(".tmp.") != std::string::npos)
      continue;
    std::error_code tec;
    const auto t = fs::last_write_time(e.path(), tec);
    if (!tec) found.emplace_back(t, e.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first
                              : fs::path(a.second).filename() > fs::path(b.second).filename();
  });
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

std::string latest_checkpoint(const std::string& prefix) {
  const auto all = checkpoints_newest_first(prefix);
  return all.empty() ? std::string() : all.front();
}

std::string dataset_identity(const Dataset& d) {
  std::uint64_t h = kChecksumStart;
  h = fnv1a(h, d.x_train());
  h = fnv1a(h, d.x_val());
  h = fnv1a(h, d.labels_train());
  h = fnv1a(h, d.labels_val());
  h = fnv1a(h, d.targets_train());
  h = fnv1a(h, d.targets_val());
  char hex[24];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return d.style() + ", " + std::to_string(d.size()) + " rows x " + std::to_string(d.features()) +
         " features, " + std::to_string(d.outputs()) + " outputs, rows fingerprint " + hex;
}

void save_checkpoint(const std::string& path, const std::string& deck, std::int64_t step,
                     const TrainState& s) {
  io::AtomicH5Writer writer(path);
  io::H5File& f = writer.file();
  io::write_hpt_header(f, io::HptFileKind::Checkpoint, deck);
  io::H5Group root = f.root();
  root.write_int_attribute("step", step);
  root.write_string_attribute("model_summary", s.model.summary());
  root.write_string_attribute("tensor_layout", tensor_layout(s.model));
  root.write_string_attribute("optimizer", s.optimizer.summary());
  root.write_string_attribute("dataset_identity", s.dataset_identity);
  root.write_int_attribute("checksum", std::int64_t(state_checksum(s)));
  io::H5Group model = root.create_group("model");
  io::write_view(model, "parameters", s.model.parameters().values());
  io::H5Group opt = root.create_group("optimizer");
  opt.write_int_attribute("step_count", s.optimizer.step_count());
  for (const auto& b : s.optimizer.state_views()) io::write_view(opt, b.name, b.view);
  io::H5Group data = root.create_group("dataset");
  data.write_int_attribute("epoch", s.dataset.cursor().epoch);
  data.write_int_attribute("position", s.dataset.cursor().position);
  io::H5Group hist = root.create_group("telemetry");
  io::write_view(hist, "loss", s.history.loss);
  io::write_view(hist, "other", s.history.other);
  io::write_view(hist, "head", s.history.head);
  io::write_view(hist, "count", s.history.count);
  io::write_view(hist, "scalars", s.history.scalars);
  if (const auto* n = s.encoder.normalizer()) {
    io::H5Group enc = root.create_group("encoder");
    io::write_view(enc, "normalizer_count", n->count);
    io::write_view(enc, "normalizer_mean", n->mean);
    io::write_view(enc, "normalizer_m2", n->m2);
    io::write_view(enc, "normalizer_center", n->center);
    io::write_view(enc, "normalizer_inv_std", n->inv_std);
  }
  writer.commit();
}

std::int64_t load_checkpoint(const std::string& path, const TrainState& s) {
  const io::H5File f = [&] {
    try {
      return io::open_hpt_file(path, io::HptFileKind::Checkpoint);
    } catch (const InputError& e) {
      throw DamagedCheckpoint(e.what());
    }
  }();
  const io::H5Group root = f.root();
  auto refuse = [&](const std::string& why) {
    return InputError("checkpoint '" + path + "' cannot be used: " + why);
  };
  auto damaged = [&](const std::string& why) {
    return DamagedCheckpoint("checkpoint '" + path + "' cannot be used: " + why);
  };
  if (root.has_attribute("dataset_identity")) {
    const std::string stored = root.read_string_attribute("dataset_identity");
    if (stored != s.dataset_identity)
      throw refuse("it was written for the data set '" + stored + "' but the deck builds '" +
                   s.dataset_identity + "'");
  }
  const std::string layout = root.read_string_attribute("tensor_layout");
  if (layout != tensor_layout(s.model))
    throw refuse("it holds the model '" + root.read_string_attribute("model_summary") +
                 "' but the deck builds '" + s.model.summary() + "'");
  const std::string opt_summary = root.read_string_attribute("optimizer");
  if (opt_summary.substr(0, opt_summary.find(' ')) !=
      s.optimizer.summary().substr(0, s.optimizer.summary().find(' ')))
    throw refuse("it holds optimizer '" + opt_summary + "' but the deck builds '" +
                 s.optimizer.summary() + "'");
  try {
    io::read_view(root.open_group("model"), "parameters", s.model.parameters().values());
    const io::H5Group opt = root.open_group("optimizer");
    for (const auto& b : s.optimizer.state_views()) io::read_view(opt, b.name, b.view);
    s.optimizer.set_step_count(long(opt.read_int_attribute("step_count")));
    const io::H5Group hist = root.open_group("telemetry");
    io::read_view(hist, "loss", s.history.loss);
    io::read_view(hist, "other", s.history.other);
    io::read_view(hist, "head", s.history.head);
    io::read_view(hist, "count", s.history.count);
    io::read_view(hist, "scalars", s.history.scalars);
    if (const auto* n = s.encoder.normalizer()) {
      const io::H5Group enc = root.open_group("encoder");
      io::read_view(enc, "normalizer_count", n->count);
      io::read_view(enc, "normalizer_mean", n->mean);
      io::read_view(enc, "normalizer_m2", n->m2);
      io::read_view(enc, "normalizer_center", n->center);
      io::read_view(enc, "normalizer_inv_std", n->inv_std);
    }
  } catch (const InputError& e) {
    throw refuse(std::string(e.what()) + " (the deck's encoder history sizes must match the run)");
  }
  if (std::uint64_t(root.read_int_attribute("checksum")) != state_checksum(s))
    throw damaged("its checksum does not match its contents (the file is damaged)");
  const io::H5Group data = root.open_group("dataset");
  s.dataset.set_cursor({data.read_int_attribute("epoch"), data.read_int_attribute("position")});
  return root.read_int_attribute("step");
}

}  // namespace hpt::train
