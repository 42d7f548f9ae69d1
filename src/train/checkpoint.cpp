#include "train/checkpoint.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "core/checksum.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"
#include "train/state_registry.hpp"

namespace fs = std::filesystem;

namespace hpt::train {

namespace {

// Every piece of a run's state, declared once for save, load and checksum. The batch cursor is read
// into `cursor` and applied by the caller (the dataset takes epoch and position together).
StateRegistry state_registry(const TrainState& s, BatchCursor* cursor) {
  StateRegistry r;
  r.add_view("model/parameters", s.model.parameters().values());
  r.add_int(
      "optimizer/step_count", [&s] { return std::int64_t(s.optimizer.step_count()); },
      [&s](std::int64_t v) { s.optimizer.set_step_count(long(v)); });
  for (const auto& b : s.optimizer.state_views()) r.add_view("optimizer/" + b.name, b.view);
  r.add_int(
      "dataset/epoch", [&s] { return s.dataset.cursor().epoch; },
      [cursor](std::int64_t v) { cursor->epoch = v; });
  r.add_int(
      "dataset/position", [&s] { return s.dataset.cursor().position; },
      [cursor](std::int64_t v) { cursor->position = v; });
  r.add_view("telemetry/loss", s.history.loss);
  r.add_view("telemetry/other", s.history.other);
  r.add_view("telemetry/head", s.history.head);
  r.add_view("telemetry/count", s.history.count);
  r.add_view("telemetry/scalars", s.history.scalars);
  if (const auto* n = s.encoder.normalizer()) {
    r.add_view("encoder/normalizer_count", n->count);
    r.add_view("encoder/normalizer_mean", n->mean);
    r.add_view("encoder/normalizer_m2", n->m2);
    r.add_view("encoder/normalizer_center", n->center);
    r.add_view("encoder/normalizer_inv_std", n->inv_std);
  }
  if (s.forecaster) s.forecaster->declare_state(r, "forecaster/");
  if (s.policy) s.policy->declare_state(r, "hybrid/");
  return r;
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
  h = fnv1a_view(h, d.x_train());
  h = fnv1a_view(h, d.x_val());
  h = fnv1a_view(h, d.labels_train());
  h = fnv1a_view(h, d.labels_val());
  h = fnv1a_view(h, d.targets_train());
  h = fnv1a_view(h, d.targets_val());
  if (d.probe_size() > 0) {  // absent from the fingerprint otherwise, as before the probe part
    h = fnv1a_view(h, d.x_probe());
    h = fnv1a_view(h, d.labels_probe());
    h = fnv1a_view(h, d.targets_probe());
  }
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
  root.write_int_attribute("ranks", s.comm.size());
  BatchCursor unused;
  const StateRegistry state = state_registry(s, &unused);
  root.write_int_attribute("checksum", std::int64_t(state.checksum()));
  state.save(root);
  writer.commit();
}

std::int64_t checkpoint_ranks(const std::string& path) {
  const io::H5File f = io::open_hpt_file(path, io::HptFileKind::Checkpoint);
  // Checkpoints from before data-parallel training are one-process ones.
  return f.root().has_attribute("ranks") ? f.root().read_int_attribute("ranks") : 1;
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
  BatchCursor cursor;
  const StateRegistry state = state_registry(s, &cursor);
  try {
    state.load(root);
  } catch (const InputError& e) {
    throw refuse(
        std::string(e.what()) +
        " (the deck's encoder history sizes, train.forecaster and train.hybrid must match the "
        "run's)");
  }
  s.dataset.set_cursor(cursor);
  if (std::uint64_t(root.read_int_attribute("checksum")) != state.checksum())
    throw damaged("its checksum does not match its contents (the file is damaged)");
  if (s.policy) s.policy->after_load();
  return root.read_int_attribute("step");
}

}  // namespace hpt::train
