// The FLOP count of the RSSM's training step (rssm_bptt_flops, kernels/rssm_bptt.hpp, the basis
// of the bench's train_step rows) against a count made here from the parameter tensors' shapes:
// every weight of a rank-3 tensor (the GRU's W and U, the prior's A and B, the loss head's C) is
// one multiply and one add per member-sample in the forward, and the backward counts two forwards.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "kernels/rssm_bptt.hpp"

namespace {

// Weights (not biases) of all members, from the shapes for_each_tensor reports.
double weight_count(int E, int H, int S, int I) {
  const hpt::RssmParams<double, Kokkos::HostSpace> p(E, H, S, I);
  double weights = 0;
  p.for_each_tensor([&](const std::string&, double*, const std::vector<std::size_t>& shape) {
    if (shape.size() == 3) weights += double(shape[0]) * double(shape[1]) * double(shape[2]);
  });
  return weights;
}

TEST(RssmBpttFlops, ThreeForwardsOfTwoFlopsPerWeightAndSample) {
  struct Size {
    int E, H, S, I, K;
  };
  // The bench's training sizes (docs/bench.md#sizes) and small odd ones.
  const Size sizes[] = {{4, 32, 8, 64, 16},    {5, 256, 32, 64, 16}, {5, 1024, 32, 64, 16},
                        {64, 256, 32, 64, 16}, {1, 3, 2, 5, 1},      {7, 17, 5, 11, 9}};
  for (const Size& z : sizes) {
    const double expected = 3.0 * 2.0 * weight_count(z.E, z.H, z.S, z.I) * z.K;
    EXPECT_DOUBLE_EQ(hpt::rssm_bptt_flops(z.E, z.H, z.S, z.I, z.K), expected)
        << "E " << z.E << " H " << z.H << " S " << z.S << " I " << z.I << " K " << z.K;
  }
}

}  // namespace
