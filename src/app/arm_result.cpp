#include "app/arm_result.hpp"

#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/atomic_file.hpp"
#include "io/communication_attributes.hpp"
#include "io/hdf5_format.hpp"
#include "io/hdf5_view.hpp"

namespace hpt::app {

namespace {

// The summary's scalars, by attribute name (the TrainSummary member each one is).
template <class T>
using Member = T train::TrainSummary::*;
template <class T>
struct Field {
  const char* name;
  Member<T> member;
};
const Field<double> kDoubles[] = {
    {"final_loss", &train::TrainSummary::final_loss},
    {"final_val_loss", &train::TrainSummary::final_val_loss},
    {"final_val_accuracy", &train::TrainSummary::final_val_accuracy},
    {"best_val_accuracy", &train::TrainSummary::best_val_accuracy},
    {"seconds", &train::TrainSummary::seconds},
    {"seconds_steps", &train::TrainSummary::seconds_steps},
    {"seconds_encode", &train::TrainSummary::seconds_encode},
    {"seconds_checkpoints", &train::TrainSummary::seconds_checkpoints},
    {"seconds_filter", &train::TrainSummary::seconds_filter},
    {"seconds_train", &train::TrainSummary::seconds_train},
    {"seconds_forecast", &train::TrainSummary::seconds_forecast},
};
const Field<std::int64_t> kInts[] = {
    {"first_step", &train::TrainSummary::first_step},
    {"last_step", &train::TrainSummary::last_step},
    {"backward_passes", &train::TrainSummary::backward_passes},
};

std::vector<train::ValidationPoint> read_validations(const io::H5Group& g) {
  const auto step = io::read_vector<std::int64_t>(g, "step");
  const auto back = io::read_vector<std::int64_t>(g, "backward_passes");
  const auto loss = io::read_vector<double>(g, "val_loss");
  const auto acc = io::read_vector<double>(g, "val_accuracy");
  const auto secs = io::read_vector<double>(g, "seconds");
  if (back.size() != step.size() || loss.size() != step.size() || acc.size() != step.size() ||
      secs.size() != step.size())
    throw InputError(g.describe() + ": its validation datasets differ in length");
  std::vector<train::ValidationPoint> points;
  for (std::size_t i = 0; i < step.size(); ++i)
    points.push_back({step[i], back[i], loss[i], acc[i], secs[i]});
  return points;
}

}  // namespace

void write_validations(io::H5Group& g, const std::vector<train::ValidationPoint>& points) {
  std::vector<std::int64_t> step, back;
  std::vector<double> loss, acc, seconds;
  for (const auto& p : points)
    step.push_back(p.step), back.push_back(p.backward), loss.push_back(p.loss),
        acc.push_back(p.accuracy), seconds.push_back(p.seconds);
  io::write_vector(g, "step", step);
  io::write_vector(g, "backward_passes", back);
  io::write_vector(g, "val_loss", loss);
  io::write_vector(g, "val_accuracy", acc);
  io::write_vector(g, "seconds", seconds);
}

void write_arm_result(const std::string& path, const std::string& deck_ini,
                      const train::TrainSummary& s) {
  io::AtomicH5Writer writer(path);
  io::H5File& f = writer.file();
  io::write_hpt_header(f, io::HptFileKind::CompareArm, deck_ini);
  io::H5Group root = f.root();
  for (const auto& d : kDoubles) root.write_double_attribute(d.name, s.*d.member);
  for (const auto& i : kInts) root.write_int_attribute(i.name, s.*i.member);
  root.write_int_attribute("non_finite", s.non_finite ? 1 : 0);
  root.write_string_attribute("last_checkpoint", s.last_checkpoint);
  io::H5Group validations = root.create_group("validations");
  write_validations(validations, s.validations);
  io::write_vector(root, "step_kind",
                   std::vector<std::int32_t>(s.real_steps.begin(), s.real_steps.end()));
  io::H5Group counters = root.create_group("policy_counters");
  for (const auto& [name, value] : s.policy_counters) counters.write_double_attribute(name, value);
  io::write_communication(root, s.communication, "comm_");
  writer.commit();
}

StoredArm read_arm_result(const std::string& path, const std::string& deck_ini) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return {};
  try {
    const io::H5File f = io::open_hpt_file(path, io::HptFileKind::CompareArm);
    const io::HptHeader header = io::read_hpt_header(f);
    if (header.version != kVersion)
      return {std::nullopt,
              "it was written by hpt " + header.version + ", this is hpt " + kVersion};
    if (header.deck != deck_ini) return {std::nullopt, "it was written for another deck"};
    const io::H5Group& root = f.root();
    train::TrainSummary s;
    for (const auto& d : kDoubles) s.*d.member = root.read_double_attribute(d.name);
    for (const auto& i : kInts) s.*i.member = root.read_int_attribute(i.name);
    s.non_finite = root.read_int_attribute("non_finite") != 0;
    s.last_checkpoint = root.read_string_attribute("last_checkpoint");
    s.validations = read_validations(root.open_group("validations"));
    for (const std::int32_t k : io::read_vector<std::int32_t>(root, "step_kind"))
      s.real_steps.push_back(char(k));
    const io::H5Group counters = root.open_group("policy_counters");
    for (const std::string& name : counters.list_attributes())
      s.policy_counters.emplace_back(name, counters.read_double_attribute(name));
    s.communication = io::read_communication(root, "comm_");
    return {s, ""};
  } catch (const InputError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace hpt::app
