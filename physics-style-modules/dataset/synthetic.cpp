#include "physics-style-modules/dataset/synthetic.hpp"

#include <cmath>
#include <cstdlib>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/types.hpp"

namespace hpt {

namespace {

// Streams of core/rng.hpp keys, one per kind of draw.
constexpr std::uint64_t kXorStream = 0x786f72ULL;
constexpr std::uint64_t kSpiralStream = 0x7370697261ULL;
constexpr std::uint64_t kTeacherWeightStream = 0x7465616368ULL;
constexpr std::uint64_t kTeacherInputStream = 0x7465616369ULL;

constexpr double kTwoPi = 6.283185307179586;

// Fills out[i] = scale * normal(key(seed, stream, a, i)) in parallel on the host.
void fill_normals(std::vector<double>& out, double scale, std::uint64_t seed, std::uint64_t stream,
                  std::uint64_t a) {
  double* p = out.data();
  Kokkos::parallel_for(
      "hpt::dataset_host_normals", Kokkos::RangePolicy<HostExec>(0, out.size()),
      [=](const std::size_t i) { p[i] = scale * rng::normal(rng::key(seed, stream, a, i)); });
  HostExec().fence();
}

}  // namespace

RawData make_xor(std::int64_t samples, double noise, std::uint64_t seed) {
  RawData d;
  d.source = "xor";
  d.rows = samples;
  d.features = 2;
  d.outputs = 2;
  d.task = Task::Classification;
  d.x.resize(std::size_t(samples) * 2);
  d.labels.resize(std::size_t(samples));
  for (std::int64_t i = 0; i < samples; ++i) {
    const int quadrant = int(i % 4);
    const double sx = (quadrant & 1) ? 1.0 : -1.0, sy = (quadrant & 2) ? 1.0 : -1.0;
    for (int c = 0; c < 2; ++c) {
      const std::uint64_t k = rng::key(seed, kXorStream, std::uint64_t(i), std::uint64_t(c));
      d.x[std::size_t(2 * i + c)] = (c == 0 ? sx : sy) * rng::uniform(k) + noise * rng::normal(k);
    }
    d.labels[std::size_t(i)] = sx != sy ? 1 : 0;
  }
  return d;
}

RawData make_spirals(std::int64_t samples, int classes, double noise, std::uint64_t seed) {
  RawData d;
  d.source = "spirals";
  d.rows = samples;
  d.features = 2;
  d.outputs = classes;
  d.task = Task::Classification;
  d.x.resize(std::size_t(samples) * 2);
  d.labels.resize(std::size_t(samples));
  for (std::int64_t i = 0; i < samples; ++i) {
    const int arm = int(i % classes);
    const std::int64_t on_arm = (samples - arm + classes - 1) / classes;  // rows of this arm
    const double t = (double(i / classes) + 0.5) / double(on_arm);
    const double angle = kTwoPi * arm / classes + 4.0 * t +
                         noise * rng::normal(rng::key(seed, kSpiralStream, std::uint64_t(i)));
    d.x[std::size_t(2 * i)] = t * std::cos(angle);
    d.x[std::size_t(2 * i + 1)] = t * std::sin(angle);
    d.labels[std::size_t(i)] = arm;
  }
  return d;
}

std::vector<int> parse_teacher_layers(const std::string& text) {
  auto bad = [&](const std::string& why) {
    return InputError("dataset.teacher_layers = '" + text + "' " + why +
                      "; expected at least two comma-separated layer widths in [1, 1048576], "
                      "input width first, e.g. 256,1024,1024,10");
  };
  std::vector<int> widths;
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string item = text.substr(begin, end - begin);
    char* stop = nullptr;
    const long v = std::strtol(item.c_str(), &stop, 10);
    const bool blank = item.find_first_not_of(" \t") == std::string::npos;
    while (stop && (*stop == ' ' || *stop == '\t')) ++stop;
    if (blank || *stop != '\0') throw bad("has '" + item + "', which is not an integer");
    if (v < 1 || v > (1L << 20)) throw bad("has a width " + std::to_string(v) + " out of range");
    widths.push_back(int(v));
    begin = end + 1;
  }
  if (widths.size() < 2) throw bad("has fewer than two widths");
  return widths;
}

dataset::TeacherWeights make_teacher_weights(const std::vector<int>& widths, std::uint64_t seed) {
  HPT_REQUIRE(widths.size() >= 2, "a teacher needs at least two layer widths");
  dataset::TeacherWeights t;
  t.widths = widths;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    t.w.emplace_back(std::size_t(widths[l + 1]) * std::size_t(widths[l]));
    fill_normals(t.w.back(), 1.0 / std::sqrt(double(widths[l])), seed, kTeacherWeightStream, l);
    t.b.emplace_back(std::size_t(widths[l + 1]), 0.0);
  }
  return t;
}

RawData make_teacher(std::int64_t samples, const std::vector<int>& widths, Task task,
                     std::uint64_t seed) {
  if (task == Task::Classification && widths.back() < 2)
    throw InputError("dataset.teacher_layers ends in a width of " + std::to_string(widths.back()) +
                     "; a classification teacher needs at least 2 outputs (classes)");
  RawData d;
  d.source = "teacher";
  d.rows = samples;
  d.features = widths.front();
  d.outputs = widths.back();
  d.task = task;
  d.x.resize(std::size_t(samples) * std::size_t(d.features));
  fill_normals(d.x, 1.0, seed, kTeacherInputStream, 0);
  const auto weights = make_teacher_weights(widths, seed);
  const ExecSpace space;
  const auto y = dataset::teacher_forward(space, weights, d.x, samples);
  if (task == Task::Classification) {
    View1<int> labels("hpt::teacher_labels", std::size_t(samples));
    dataset::argmax_rows<ExecSpace, double>(space, y, labels);
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), labels);
    d.labels.assign(host.data(), host.data() + host.size());
  } else {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), y);
    d.targets.assign(host.data(), host.data() + host.size());
  }
  return d;
}

}  // namespace hpt
