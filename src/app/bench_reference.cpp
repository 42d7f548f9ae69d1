#include "app/bench_reference.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"
#include "kernels/encode_prototype.hpp"
#include "kernels/encode_rich.hpp"

namespace hpt::app {

RolloutBenchInputs make_rollout_bench_inputs(const RolloutSize& sz, std::uint64_t seed) {
  RolloutBenchInputs in;
  in.params = RssmParams<real>(sz.members, sz.hidden, sz.stochastic, sz.input);
  initialize_rssm_params(ExecSpace(), in.params, seed);
  in.h0 = View2<real>("hpt::bench_h0", sz.members, sz.hidden);
  fill_uniform(ExecSpace(), View1<real>(in.h0.data(), in.h0.size()), seed, 1001, 0, 0.5);
  in.inputs.x0 = View1<real>("hpt::bench_x0", sz.input);
  fill_uniform(ExecSpace(), in.inputs.x0, seed, 1002, 0, 1.0);
  in.inputs.norm_mean = View1<real>("hpt::bench_norm_mean", sz.input);
  in.inputs.norm_inv_std = View1<real>("hpt::bench_norm_inv_std", sz.input);
  fill_uniform(ExecSpace(), in.inputs.norm_mean, seed, 1003, 0, 0.1);
  Kokkos::deep_copy(in.inputs.norm_inv_std, real(1));
  // A plausible loss state: log loss about log(0.5), a gently decreasing recent window.
  in.inputs.loss_states = View1<LossState<real>>("hpt::bench_loss_state", 1);
  auto st = Kokkos::create_mirror_view(in.inputs.loss_states);
  LossState<real> s{};
  s.log_loss = real(std::log(0.5));
  s.ema4 = s.log_loss + real(0.01);
  s.ema16 = s.log_loss + real(0.05);
  s.ema64 = s.log_loss + real(0.2);
  s.best = s.log_loss - real(0.02);
  s.first = real(std::log(2.3));
  s.mean32 = s.log_loss + real(0.04);
  s.std32 = real(0.05);
  for (int i = 0; i < kLossWindow; ++i)
    s.window[i] = s.log_loss + real(0.01 * (kLossWindow - 1 - i));
  s.count = kLossWindow;
  st(0) = s;
  Kokkos::deep_copy(in.inputs.loss_states, st);
  in.settings.horizon = sz.horizon;
  in.settings.scenarios = sz.scenarios;
  in.settings.seed = seed;
  in.settings.feature_update = FeatureUpdate::Rich;
  in.settings.clamp = 10.0;
  return in;
}

std::vector<reference::HostRun> fill_random_history(const TelemetryHistory<real>& history,
                                                    int steps, int tracked, std::uint64_t seed) {
  const int R = history.runs();
  std::vector<reference::HostRun> host(std::size_t(std::min(tracked, R)));
  Kokkos::View<TelemetryRecord*, Kokkos::LayoutRight, MemSpace> records("hpt::bench_records", R);
  auto mirror = Kokkos::create_mirror_view(records);
  std::mt19937 gen{static_cast<std::uint32_t>(seed)};
  for (int t = 0; t < steps; ++t) {
    for (int r = 0; r < R; ++r) {
      mirror(r) = reference::random_record(gen, r, t);
      if (r < int(host.size())) reference::apply_record<real>(host[std::size_t(r)], mirror(r));
    }
    Kokkos::deep_copy(records, mirror);
    push_records(ExecSpace(), history, View1<const TelemetryRecord>(records));
  }
  Kokkos::fence();
  return host;
}

}  // namespace hpt::app

namespace hpt::app {

namespace {

// Host copies of the rollout inputs, in double.
struct HostRssm {
  int E, H, S, I;
  GruReset reset;
  std::vector<double> w_ih, w_hh, b_ih, b_hh, pm_w, pm_b, ps_w, ps_b, lh_w, lh_b, h0, x0, mean,
      inv_std;
  LossState<real> state;
};

template <class V>
std::vector<double> to_host(const V& v) {
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  return std::vector<double>(h.data(), h.data() + h.span());
}

HostRssm host_copy(const RolloutBenchInputs& in) {
  const auto& p = in.params;
  HostRssm r{p.members(),
             p.hidden(),
             p.stochastic(),
             p.input(),
             in.reset,
             to_host(p.gru.w_ih),
             to_host(p.gru.w_hh),
             to_host(p.gru.b_ih),
             to_host(p.gru.b_hh),
             to_host(p.prior_mean_w),
             to_host(p.prior_mean_b),
             to_host(p.prior_scale_w),
             to_host(p.prior_scale_b),
             to_host(p.loss_head_w),
             to_host(p.loss_head_b),
             to_host(in.h0),
             to_host(in.inputs.x0),
             to_host(in.inputs.norm_mean),
             to_host(in.inputs.norm_inv_std),
             {}};
  auto st = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), in.inputs.loss_states);
  r.state = st(in.inputs.run);
  return r;
}

double sigmoid(double v) {
  return 1.0 / (1.0 + std::exp(-v));
}

// One GRU step of member m (docs/method.md#gru-cell), plain loops in double.
std::vector<double> gru_host(const HostRssm& p, int m, const double* x, const double* h) {
  const int H = p.H, I = p.I;
  auto wi = [&](int row, int k) { return p.w_ih[(std::size_t(m) * 3 * H + row) * I + k]; };
  auto wh = [&](int row, int k) { return p.w_hh[(std::size_t(m) * 3 * H + row) * H + k]; };
  auto bi = [&](int row) { return p.b_ih[std::size_t(m) * 3 * H + row]; };
  auto bh = [&](int row) { return p.b_hh[std::size_t(m) * 3 * H + row]; };
  std::vector<double> r(H), z(H), out(H);
  for (int j = 0; j < H; ++j) {
    double ar = bi(j) + bh(j), az = bi(H + j) + bh(H + j);
    for (int k = 0; k < I; ++k) ar += wi(j, k) * x[k], az += wi(H + j, k) * x[k];
    for (int k = 0; k < H; ++k) ar += wh(j, k) * h[k], az += wh(H + j, k) * h[k];
    r[j] = sigmoid(ar), z[j] = sigmoid(az);
  }
  for (int j = 0; j < H; ++j) {
    double wx = bi(2 * H + j), uh = 0;
    for (int k = 0; k < I; ++k) wx += wi(2 * H + j, k) * x[k];
    for (int k = 0; k < H; ++k)
      uh += wh(2 * H + j, k) * (p.reset == GruReset::After ? h[k] : r[k] * h[k]);
    const double n = p.reset == GruReset::After ? std::tanh(wx + r[j] * (uh + bh(2 * H + j)))
                                                : std::tanh(wx + uh + bh(2 * H + j));
    // After (PyTorch): h' = (1 - z) n + z h; Before (prototype): h' = (1 - z) h + z n.
    out[j] =
        p.reset == GruReset::After ? (1 - z[j]) * n + z[j] * h[j] : (1 - z[j]) * h[j] + z[j] * n;
  }
  return out;
}

double relative_deviation(double kernel, double ref) {
  return std::fabs(kernel - ref) / std::max(1.0, std::fabs(ref));
}

}  // namespace

double rollout_reference_deviation(const RolloutBenchInputs& in, const RolloutOutputs<real>& out,
                                   int scenarios) {
  const HostRssm p = host_copy(in);
  const auto paths = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), out.loss_paths);
  const int Y = in.settings.horizon, S = p.S, H = p.H;
  const std::uint64_t seed = in.settings.seed;
  double worst = 0;
  for (int n = 0; n < std::min(scenarios, in.settings.scenarios); ++n)
    for (int m = 0; m < p.E; ++m) {
      std::vector<double> h(p.h0.begin() + std::size_t(m) * H,
                            p.h0.begin() + std::size_t(m + 1) * H);
      std::vector<double> x = p.x0, s(S);
      // The path's loss statistics, continued exactly as docs/method.md#ensemble-rollout describes
      // (in double).
      double l = p.state.log_loss, e4 = p.state.ema4, e16 = p.state.ema16, e64 = p.state.ema64,
             best = p.state.best;
      std::vector<double> win(p.state.window, p.state.window + kLossWindow);
      int count = p.state.count;
      worst = std::max(worst, relative_deviation(paths(n, m, 0), std::exp(l)));
      for (int k = 1; k <= Y; ++k) {
        h = gru_host(p, m, x.data(), h.data());
        for (int i = 0; i < S; ++i) {
          double mu = p.pm_b[std::size_t(m) * S + i], sg = p.ps_b[std::size_t(m) * S + i];
          for (int j = 0; j < H; ++j) {
            mu += p.pm_w[(std::size_t(m) * S + i) * H + j] * h[j];
            sg += p.ps_w[(std::size_t(m) * S + i) * H + j] * h[j];
          }
          const double sigma =
              (sg > 0 ? sg + std::log1p(std::exp(-sg)) : std::log1p(std::exp(sg))) +
              kPriorScaleFloor;
          s[i] = mu + sigma * rng::normal(rng::key(seed, n, m, k, i));
        }
        double head[2];
        for (int o = 0; o < 2; ++o) {
          head[o] = p.lh_b[std::size_t(m) * 2 + o];
          const double* w = &p.lh_w[(std::size_t(m) * 2 + o) * (H + S)];
          for (int j = 0; j < H; ++j) head[o] += w[j] * h[j];
          for (int i = 0; i < S; ++i) head[o] += w[H + i] * s[i];
        }
        const double log_var = std::min(kLogVarLimit, std::max(-kLogVarLimit, head[1]));
        const double delta =
            head[0] + std::exp(0.5 * log_var) * rng::normal(rng::key(seed, n, m, k, S));
        l += delta;
        e4 += (l - e4) / 4, e16 += (l - e16) / 16, e64 += (l - e64) / 64;
        best = std::min(best, l);
        win.erase(win.begin());
        win.push_back(l);
        count = std::min(count + 1, kLossWindow);
        if (in.settings.feature_update == FeatureUpdate::LossOnly) {
          x[0] = std::exp(l);
        } else {
          const int w = std::min(count, kLossWindow);
          double mean = 0, sxy = 0, sxx = 0;
          for (int i = kLossWindow - w; i < kLossWindow; ++i) mean += win[i] / w;
          for (int i = 0; i < w; ++i) {
            const double dx = i - (w - 1) / 2.0;
            sxy += dx * (win[kLossWindow - w + i] - mean), sxx += dx * dx;
          }
          auto put = [&](int idx, double raw) {
            const double c = in.settings.clamp;
            x[idx] = std::min(c, std::max(-c, (raw - p.mean[idx]) * p.inv_std[idx]));
          };
          put(rich::kLogLoss, l);
          put(rich::kLossSlope8, w < 2 ? 0.0 : sxy / sxx);
          put(rich::kLossEmaGap4, l - e4);
          put(rich::kLossEmaGap16, l - e16);
          put(rich::kLossEmaGap64, l - e64);
          put(rich::kLossBestGap, l - best);
          put(rich::kLossLastDelta, delta);
          put(rich::kLossZ32, (l - p.state.mean32) / (p.state.std32 + 1e-8));
          put(rich::kLossProgress, p.state.first - l);
        }
        worst = std::max(worst, relative_deviation(paths(n, m, k), std::exp(l)));
      }
    }
  return worst;
}

double gru_reference_deviation(const RolloutBenchInputs& in, const View3<real>& x,
                               const View3<real>& h, const View3<real>& h_out, int scenarios) {
  const HostRssm p = host_copy(in);
  const auto xh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), x);
  const auto hh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h);
  const auto oh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), h_out);
  double worst = 0;
  for (int n = 0; n < std::min<int>(scenarios, int(x.extent(0))); ++n)
    for (int m = 0; m < p.E; ++m) {
      std::vector<double> xv(p.I), hv(p.H);
      for (int k = 0; k < p.I; ++k) xv[k] = xh(n, m, k);
      for (int k = 0; k < p.H; ++k) hv[k] = hh(n, m, k);
      const auto ref = gru_host(p, m, xv.data(), hv.data());
      for (int j = 0; j < p.H; ++j)
        worst = std::max(worst, relative_deviation(oh(n, m, j), ref[j]));
    }
  return worst;
}

double encoder_reference_deviation(const std::string& style, const TelemetryHistory<real>& history,
                                   const std::vector<reference::HostRun>& host,
                                   const EncodeLaunch& launch) {
  View2<real> raw("hpt::bench_raw_features", history.runs(), kFeatures);
  if (style == "rich")
    encode_rich(ExecSpace(), history, raw, launch);
  else
    encode_prototype(ExecSpace(), history, raw);
  const auto got = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), raw);
  double worst = 0;
  for (std::size_t r = 0; r < host.size(); ++r) {
    const auto ref =
        style == "rich"
            ? reference::host_rich(host[r], history.loss_capacity(), history.other_capacity())
            : reference::host_prototype(host[r], history.loss_capacity(), history.other_capacity());
    for (int f = 0; f < kFeatures; ++f) {
      const double a = got(r, f), b = ref[std::size_t(f)];
      if (std::isnan(a) && std::isnan(b)) continue;  // the parity encoder's NaN loss on a fresh run
      const double b_stored = std::isfinite(real(b)) ? b : 0.0;
      worst = std::max(worst, relative_deviation(a, b_stored));
    }
  }
  return worst;
}

}  // namespace hpt::app
