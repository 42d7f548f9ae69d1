#pragma once
// Generated training problems (docs/method.md#training-problems): `xor`, `spirals` and `teacher`.
// Every random number comes from core/rng.hpp keyed by (dataset seed, stream, row, column), drawn
// on the host, so a seed gives the same rows on every backend and thread count.
#include <cstdint>
#include <string>
#include <vector>

#include "core/raw_data.hpp"
#include "kernels/teacher_kernels.hpp"

namespace hpt {

// 2-D points, one noisy XOR quadrant per row (row i in quadrant i mod 4): x = (sx u1, sy u2) +
// noise n with u uniform in (0, 1), n standard normal, signs sx, sy from the quadrant; label 1 when
// the quadrant signs differ. Classes are balanced to within one row.
RawData make_xor(std::int64_t samples, double noise, std::uint64_t seed);

// `classes` interleaved spiral arms in 2-D; row i belongs to arm c = i mod classes and sits at
// radius t in (0, 1) (evenly spaced along its arm) and angle 2 pi c / classes + 4 t + noise n (n
// standard normal, so the noise is in radians).
RawData make_spirals(std::int64_t samples, int classes, double noise, std::uint64_t seed);

// Parses dataset.teacher_layers ("256,1024,1024,10": input width first, output width last).
std::vector<int> parse_teacher_layers(const std::string& text);

// Random teacher weights: w ~ N(0, 1 / fan_in), zero biases.
dataset::TeacherWeights make_teacher_weights(const std::vector<int>& widths, std::uint64_t seed);

// `samples` standard-normal inputs of width widths[0] through the teacher (tanh hidden layers,
// linear output) on the default device; classification: label = argmax of the outputs
// (widths.back() classes), regression: the outputs are the targets.
RawData make_teacher(std::int64_t samples, const std::vector<int>& widths, Task task,
                     std::uint64_t seed);

}  // namespace hpt
