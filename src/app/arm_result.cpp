#include "app/arm_result.hpp"

#include <filesystem>
#include <vector>

#include "core/error.hpp"
#include "core/version.hpp"
#include "io/atomic_file.hpp"
#include "io/hdf5_format.hpp"

namespace hpt::app {

namespace {

// The summary's scalars, by attribute name (the TrainSummary field each one is).
using DoubleMember = double train::TrainSummary::*;
using IntMember = std::int64_t train::TrainSummary::*;
struct DoubleField {
  const char* name;
  DoubleMember field;
};
const DoubleField kDoubles[] = {
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
struct IntField {
  const char* name;
  IntMember field;
};
const IntField kInts[] = {
    {"first_step", &train::TrainSummary::first_step},
    {"last_step", &train::TrainSummary::last_step},
    {"backward_passes", &train::TrainSummary::backward_passes},
};

template <class T>
std::vector<T> read_vector(const io::H5Group& g, const std::string& name, io::H5Element element) {
  const io::H5Dataset d = g.open_dataset_checked(name, element, 1);
  std::vector<T> v(d.shape()[0]);
  d.read(element, v.data(), std::vector<std::size_t>{v.size()});
  return v;
}

}  // namespace

void write_arm_result(const std::string& path, const std::string& deck_ini,
                      const train::TrainSummary& s) {
  io::AtomicH5Writer writer(path);
  io::H5File& f = writer.file();
  io::write_hpt_header(f, io::HptFileKind::CompareArm, deck_ini);
  io::H5Group root = f.root();
  for (const DoubleField& d : kDoubles) root.write_double_attribute(d.name, s.*d.field);
  for (const IntField& i : kInts) root.write_int_attribute(i.name, s.*i.field);
  root.write_int_attribute("non_finite", s.non_finite ? 1 : 0);
  root.write_string_attribute("last_checkpoint", s.last_checkpoint);

  std::vector<std::int64_t> step, back;
  std::vector<double> loss, acc, seconds;
  for (const auto& p : s.validations)
    step.push_back(p.step), back.push_back(p.backward), loss.push_back(p.loss),
        acc.push_back(p.accuracy), seconds.push_back(p.seconds);
  const std::vector<std::size_t> shape{step.size()};
  root.write_dataset("validations/step", io::H5Element::Int64, step.data(), shape);
  root.write_dataset("validations/backward_passes", io::H5Element::Int64, back.data(), shape);
  root.write_dataset("validations/val_loss", io::H5Element::Float64, loss.data(), shape);
  root.write_dataset("validations/val_accuracy", io::H5Element::Float64, acc.data(), shape);
  root.write_dataset("validations/seconds", io::H5Element::Float64, seconds.data(), shape);
  const std::vector<std::int32_t> kinds(s.real_steps.begin(), s.real_steps.end());
  root.write_dataset("step_kind", io::H5Element::Int32, kinds.data(), {kinds.size()});
  io::H5Group counters = root.create_group("policy_counters");
  for (const auto& [name, value] : s.policy_counters) counters.write_double_attribute(name, value);
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
    for (const DoubleField& d : kDoubles) s.*d.field = root.read_double_attribute(d.name);
    for (const IntField& i : kInts) s.*i.field = root.read_int_attribute(i.name);
    s.non_finite = root.read_int_attribute("non_finite") != 0;
    s.last_checkpoint = root.read_string_attribute("last_checkpoint");
    const auto step = read_vector<std::int64_t>(root, "validations/step", io::H5Element::Int64);
    const auto back =
        read_vector<std::int64_t>(root, "validations/backward_passes", io::H5Element::Int64);
    const auto loss = read_vector<double>(root, "validations/val_loss", io::H5Element::Float64);
    const auto acc = read_vector<double>(root, "validations/val_accuracy", io::H5Element::Float64);
    const auto secs = read_vector<double>(root, "validations/seconds", io::H5Element::Float64);
    if (back.size() != step.size() || loss.size() != step.size() || acc.size() != step.size() ||
        secs.size() != step.size())
      throw InputError("file '" + path + "': the validations/* datasets differ in length");
    for (std::size_t i = 0; i < step.size(); ++i)
      s.validations.push_back({step[i], back[i], loss[i], acc[i], secs[i]});
    for (const std::int32_t k : read_vector<std::int32_t>(root, "step_kind", io::H5Element::Int32))
      s.real_steps.push_back(char(k));
    const io::H5Group counters = root.open_group("policy_counters");
    for (const std::string& name : counters.list_attributes())
      s.policy_counters.emplace_back(name, counters.read_double_attribute(name));
    return {s, ""};
  } catch (const InputError& e) {
    return {std::nullopt, e.what()};
  }
}

}  // namespace hpt::app
