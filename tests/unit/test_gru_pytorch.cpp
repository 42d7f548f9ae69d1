// The GRU with reset After against PyTorch's nn.GRUCell, an independent reference: the hidden
// states in tests/data/gru_reference.h5 (written by tests/data/make_gru_reference.py in float64
// from inputs that float32 holds exactly). gru_step for one step and along a 20-step sequence, and
// the first GRU step of every rollout kernel, on every backend and both precisions.
#include <cstdlib>
#include <gtest/gtest.h>

#include <Kokkos_Core.hpp>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "io/hdf5_file.hpp"
#include "io/hdf5_view.hpp"
#include "kernels/ensemble_rollout.hpp"
#include "kernels/ensemble_rollout_dispatch.hpp"
#include "kernels/ensemble_rollout_persistent.hpp"
#include "kernels/ensemble_rollout_tiled.hpp"
#include "kernels/gru_step.hpp"
#include "test_rollout_support.hpp"
#include "test_support.hpp"

namespace {

using hpt::GruReset;
using hpt::test::download;
using hpt::test::test_data_dir;

// One nn.GRUCell of the reference file: parameters (gate rows r, z, n), inputs x (T,B,I) and h0
// (B,H), and h (T,B,H) with h[t] the hidden state after step t + 1; all as double.
struct TorchCase {
  int H = 0, I = 0, B = 0, T = 0;
  std::vector<double> w_ih, w_hh, b_ih, b_hh, x, h0, h;
};

template <class T>
std::vector<double> read_as_double(const hpt::io::H5Group& g, const std::string& name,
                                   const std::vector<std::size_t>& shape) {
  const auto values = hpt::io::read_array<T>(g, name, shape);
  return std::vector<double>(values.begin(), values.end());
}

TorchCase load_case(int H, int I) {
  const auto file = hpt::io::H5File::open_read(test_data_dir() + "/gru_reference.h5");
  const auto g = file.root().open_group("H" + std::to_string(H) + "_I" + std::to_string(I));
  TorchCase c;
  c.H = int(g.read_int_attribute("hidden"));
  c.I = int(g.read_int_attribute("input"));
  c.B = int(g.read_int_attribute("batch"));
  c.T = int(g.read_int_attribute("steps"));
  EXPECT_EQ(c.H, H);
  EXPECT_EQ(c.I, I);
  const std::size_t G = 3 * std::size_t(H), B = c.B, T = c.T;
  c.w_ih = read_as_double<float>(g, "weight_ih", {G, std::size_t(I)});
  c.w_hh = read_as_double<float>(g, "weight_hh", {G, std::size_t(H)});
  c.b_ih = read_as_double<float>(g, "bias_ih", {G});
  c.b_hh = read_as_double<float>(g, "bias_hh", {G});
  c.x = read_as_double<float>(g, "x", {T, B, std::size_t(I)});
  c.h0 = read_as_double<float>(g, "h0", {B, std::size_t(H)});
  c.h = read_as_double<double>(g, "h", {T, B, std::size_t(H)});
  return c;
}

struct Size {
  int H, I;
};
const std::vector<Size> kSizes = {{7, 1}, {7, 64}, {64, 1}, {64, 64}, {256, 1}, {256, 64}};

// Copies `values` (row-major, as many as the View holds from offset `first`) into the View.
template <class View>
void upload(const View& v, const std::vector<double>& values, std::size_t first = 0) {
  auto mirror = Kokkos::create_mirror_view(v);
  ASSERT_LE(first + mirror.span(), values.size());
  using T = typename View::non_const_value_type;
  for (std::size_t i = 0; i < mirror.span(); ++i) mirror.data()[i] = T(values[first + i]);
  Kokkos::deep_copy(v, mirror);
}

// nn.GRUCell's weight_ih, weight_hh, bias_ih, bias_hh as every member's GRU.
template <class Real, class Mem>
void set_torch_weights(const hpt::GruWeights<Real, Mem>& w, const TorchCase& c) {
  for (int m = 0; m < w.members(); ++m) {
    upload(Kokkos::subview(w.w_ih, m, Kokkos::ALL(), Kokkos::ALL()), c.w_ih);
    upload(Kokkos::subview(w.w_hh, m, Kokkos::ALL(), Kokkos::ALL()), c.w_hh);
    upload(Kokkos::subview(w.b_ih, m, Kokkos::ALL()), c.b_ih);
    upload(Kokkos::subview(w.b_hh, m, Kokkos::ALL()), c.b_hh);
  }
}

// How many of `got` lie outside near_rel(tol) of want[first, first + got.size()); reports the
// first few.
int count_mismatches(const std::vector<double>& got, const std::vector<double>& want,
                     std::size_t first, double tol, bool report) {
  int bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const auto ok = hpt::test::near_rel(got[i], want[first + i], tol);
    if (!ok && report && bad < 5) ADD_FAILURE() << "element " << i << ": " << ok.message();
    if (!ok) ++bad;
  }
  return bad;
}

// gru_step over the T steps of a case from h0 (x and h as (B, 1, ·): one member); returns the
// hidden state after every step, (T, B, H).
template <class Space, class Real>
std::vector<double> run_sequence(const TorchCase& c, GruReset reset, int steps) {
  using Mem = typename Space::memory_space;
  hpt::GruWeights<Real, Mem> w(1, c.H, c.I);
  set_torch_weights(w, c);
  hpt::View3<Real, Mem> x("x", c.B, 1, c.I), h_a("h_a", c.B, 1, c.H), h_b("h_b", c.B, 1, c.H);
  upload(h_a, c.h0);
  std::vector<double> out;
  for (int t = 0; t < steps; ++t) {
    const auto& h_old = t % 2 == 0 ? h_a : h_b;
    const auto& h_new = t % 2 == 0 ? h_b : h_a;
    upload(x, c.x, std::size_t(t) * c.B * c.I);
    hpt::gru_step(Space(), w, reset, x, h_old, h_new);
    Space().fence();
    const auto step = download(h_new);
    out.insert(out.end(), step.begin(), step.end());
  }
  return out;
}

template <class T>
class GruPyTorch : public ::testing::Test {};
TYPED_TEST_SUITE(GruPyTorch, hpt::test::BackendsAndPrecisions, hpt::test::TypedTestNames);

TYPED_TEST(GruPyTorch, OneStepMatchesGruCell) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  for (const auto& s : kSizes) {
    SCOPED_TRACE(::testing::Message() << "H=" << s.H << " I=" << s.I);
    const TorchCase c = load_case(s.H, s.I);
    const auto got = run_sequence<Space, Real>(c, GruReset::After, 1);
    ASSERT_EQ(got.size(), std::size_t(c.B) * c.H);
    count_mismatches(got, c.h, 0, hpt::test::tolerance<Real>(c.H + c.I), true);
  }
}

TYPED_TEST(GruPyTorch, SequenceMatchesGruCellAfterEveryStep) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  for (const auto& s : kSizes) {
    const TorchCase c = load_case(s.H, s.I);
    const auto got = run_sequence<Space, Real>(c, GruReset::After, c.T);
    ASSERT_EQ(got.size(), c.h.size());
    const std::size_t per_step = std::size_t(c.B) * c.H;
    for (int t = 0; t < c.T; ++t) {
      SCOPED_TRACE(::testing::Message() << "H=" << s.H << " I=" << s.I << " step " << t + 1);
      // Rounding errors of the recurrent products carry over from step to step.
      const double tol = 4.0 * (t + 1) * hpt::test::tolerance<Real>(c.H + c.I);
      const std::vector<double> step(got.begin() + t * per_step, got.begin() + (t + 1) * per_step);
      count_mismatches(step, c.h, t * per_step, tol, true);
    }
  }
}

// The data tell the conventions apart: `before` (the prototype's GRU) misses the reference in most
// elements after one step.
TYPED_TEST(GruPyTorch, ReferenceRejectsResetBefore) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  for (const auto& s : kSizes) {
    SCOPED_TRACE(::testing::Message() << "H=" << s.H << " I=" << s.I);
    const TorchCase c = load_case(s.H, s.I);
    const auto got = run_sequence<Space, Real>(c, GruReset::Before, 1);
    const double tol = 100.0 * hpt::test::tolerance<Real>(c.H + c.I);
    EXPECT_GT(count_mismatches(got, c.h, 0, tol, false), int(got.size()) / 2);
  }
}

// Every rollout kernel's first step: h_1 = GRU(h0, x0) before anything else of the path acts, so
// a rollout of horizon 1 leaves final_latents = nn.GRUCell(x[0], h0) in every scenario. One
// member and one torch batch row per rollout (the rollout's x0 is shared by its members).
TYPED_TEST(GruPyTorch, RolloutKernelsFirstStepMatchesGruCell) {
  using Space = typename TypeParam::space;
  using Real = typename TypeParam::real;
  using Mem = typename Space::memory_space;
  constexpr int kWide = hpt::rollout_tile_rows<Space>();
  const int S = 2;
  hpt::RolloutSettings settings;
  settings.horizon = 1;
  settings.scenarios = kWide;  // fills one wide tile
  settings.feature_update = hpt::FeatureUpdate::LossOnly;
  for (const auto& s : kSizes) {
    const TorchCase c = load_case(s.H, s.I);
    const double tol = 4.0 * hpt::test::tolerance<Real>(c.H + c.I);
    for (int b = 0; b < c.B; ++b) {
      hpt::RssmParams<Real, Mem> params(1, c.H, S, c.I);
      set_torch_weights(params.gru, c);
      hpt::View2<Real, Mem> h0("h0", 1, c.H);
      hpt::RolloutInputs<Real, Mem> in;
      in.x0 = hpt::View1<Real, Mem>("x0", c.I);
      in.norm_mean = hpt::View1<Real, Mem>("mean", c.I);
      in.norm_inv_std = hpt::View1<Real, Mem>("inv_std", c.I);
      upload(h0, c.h0, std::size_t(b) * c.H);
      upload(in.x0, c.x, std::size_t(b) * c.I);  // x[0][b]
      Kokkos::deep_copy(in.norm_inv_std, Real(1));
      in.loss_states = hpt::View1<hpt::LossState<Real>, Mem>("loss_states", 1);
      auto state = Kokkos::create_mirror_view(in.loss_states);
      state(0) = hpt::LossState<Real>{};
      state(0).log_loss = state(0).ema4 = state(0).ema16 = state(0).ema64 = Real(-0.1);
      state(0).best = state(0).first = state(0).mean32 = Real(-0.1);
      state(0).window[hpt::kLossWindow - 1] = Real(-0.1);
      state(0).count = 1;
      Kokkos::deep_copy(in.loss_states, state);

      // Runs one kernel into outputs poisoned with NaN and checks every scenario's final h.
      auto check = [&](const char* kernel, const auto& launch) {
        SCOPED_TRACE(::testing::Message()
                     << kernel << " H=" << c.H << " I=" << c.I << " row " << b);
        hpt::RolloutOutputs<Real, Mem> out(settings.scenarios, 1, c.H, settings.horizon);
        Kokkos::deep_copy(out.final_latents, std::numeric_limits<Real>::quiet_NaN());
        launch(out);
        Space().fence();
        const auto latents = download(out.final_latents);  // (N, 1, H)
        for (int n = 0; n < settings.scenarios; ++n) {
          const std::vector<double> row(latents.begin() + std::size_t(n) * c.H,
                                        latents.begin() + std::size_t(n + 1) * c.H);
          count_mismatches(row, c.h, std::size_t(b) * c.H, tol, true);
        }
      };
      using Out = hpt::RolloutOutputs<Real, Mem>;
      const GruReset after = GruReset::After;
      check("team-per-path", [&](const Out& out) {
        hpt::ensemble_rollout(Space(), params, after, h0, in, settings, out);
      });
      check("tiled-1", [&](const Out& out) {
        hpt::ensemble_rollout_tiled<1>(Space(), params, after, h0, in, settings, out);
      });
      check("tiled-wide", [&](const Out& out) {
        hpt::ensemble_rollout_tiled<kWide>(Space(), params, after, h0, in, settings, out);
      });
      if (hpt::persistent_rollout_supported<Space, Real>(1, settings.scenarios, c.H, c.I, S)) {
        check("persistent", [&](const Out& out) {
          hpt::ensemble_rollout_persistent(Space(), params, after, h0, in, settings, out);
        });
      }
      check("auto", [&](const Out& out) {
        hpt::ensemble_rollout_auto(Space(), params, after, h0, in, settings, out);
      });
    }
  }
}

}  // namespace
