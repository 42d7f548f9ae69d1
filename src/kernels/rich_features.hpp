#pragma once
// Layout of the `rich` encoder's 64 features (docs/method.md#rich-encoder). Raw values are computed
// by encode_rich and then z-scored by the running normaliser. l = log(max(L, 1e-12)) is the log
// loss, g the global gradient norm, u the update norm. Windows count steps back from the newest
// entry; a window longer than the history uses the whole history. Slopes are least-squares slopes
// per step. The rollout (docs/method.md#ensemble-rollout) re-computes the features marked [R] along
// imagined loss paths.
namespace hpt::rich {

enum Feature : int {
  // ---- loss group (24)
  kLogLoss = 0,         // [R] l_t
  kLossMean8,           // mean of l over the last 8
  kLossMean32,          // mean of l over the last 32
  kLossMean128,         // mean of l over the last 128
  kLossStd8,            // population std of l over the last 8
  kLossStd32,           // ... last 32
  kLossStd128,          // ... last 128
  kLossSlope8,          // [R] least-squares slope of l over the last 8
  kLossSlope32,         // slope of l over the last 32
  kLossSlope128,        // slope of l over the last 128
  kLossEmaGap4,         // [R] l_t - EMA_4(l)   (EMA with alpha = 1/tau, oldest entry as the start)
  kLossEmaGap16,        // [R] l_t - EMA_16(l)
  kLossEmaGap64,        // [R] l_t - EMA_64(l)
  kLossBestGap,         // [R] l_t - min(l) over the history (>= 0)
  kLossIncreaseFrac32,  // fraction of steps with l_k > l_{k-1} over the last 32
  kLossLastDelta,       // [R] l_t - l_{t-1}
  kLossAbsDeltaMean32,  // mean |l_k - l_{k-1}| over the last 32
  kLossZ32,             // [R] (l_t - mean32) / (std32 + 1e-8)
  kLossRange128,        // max - min of l over the last 128
  kLossCurvature,       // slope8 - slope32
  kLossProgress,        // [R] l_first - l_t (first entry of the history)
  kValLogLoss,          // log of the newest validation loss (0 if none, see kValAvailable)
  kGenGap,              // log val loss - EMA_16(l) (0 if no validation loss yet)
  kValTrend,            // log val loss - log previous val loss (0 with fewer than 2)
  // ---- gradient group (16)
  kLogGrad = 24,        // log g_t
  kGradMean8,           // mean of log g over the last 8
  kGradMean32,          // mean of log g over the last 32
  kGradStd8,            // std of log g over the last 8
  kGradStd32,           // std of log g over the last 32
  kGradSlope8,          // slope of log g over the last 8
  kGradSlope32,         // slope of log g over the last 32
  kGradEmaRatio16,      // log g_t - log EMA_16(g)
  kGradMaxGap32,        // max(log g) over the last 32 - log g_t
  kGradMinGap32,        // log g_t - min(log g) over the last 32
  kGradCv32,            // std(g) / mean(g) over the last 32 (linear g)
  kGradIncreaseFrac32,  // fraction of increases of g over the last 32
  kGradTensorStd,       // std of log per-tensor gradient norms (dispersion across tensors)
  kGradTensorRange,     // max - min of log per-tensor gradient norms
  kLogGradOverLoss,     // log g_t - l_t
  kLogLrGrad,           // log(lr * g_t): size of a plain gradient step
  // ---- optimizer / update group (16)
  kLogLr = 40,           // log lr
  kLogUpdate,            // log u_t
  kLogUpdateOverWeight,  // log(u_t / weight norm)
  kLogWeight,            // log weight norm
  kUpdateCos,            // cosine between the last two updates
  kUpdateCosMean8,       // mean cosine over the last 8
  kUpdateCosMean32,      // mean cosine over the last 32
  kUpdateSlope8,         // slope of log u over the last 8
  kUpdateEmaRatio16,     // log u_t - log EMA_16(u)
  kLogMomentMean,        // log mean |m| (Adam first moment; SGD momentum-buffer norm)
  kLogVarianceMean,      // log mean v (Adam second moment; 0 for SGD)
  kMomentSnr,            // log(mean|m| / (sqrt(mean v) + 1e-8)) (0 for SGD)
  kBeta1Pow,             // beta1^t
  kBeta2Pow,             // beta2^t
  kWeightSlope32,        // slope of log weight norm over the last 32 (per step)
  kLogMomentStd,         // log(std of |m| + 1e-12)
  // ---- context group (8)
  kPhaseFull = 56,  // one-hot phase (Warmup is all three zero)
  kPhasePredict,
  kPhaseCorrect,
  kStepsInPhase,   // steps in the current phase / 100
  kLogStep,        // log10(step + 1)
  kPredictedFrac,  // fraction of steps predicted so far
  kForecastError,  // last normalised forecast error (0 if none)
  kValAvailable,   // 1 if a validation loss has been recorded, else 0
  kCount
};
static_assert(kCount == 64, "the rich encoder produces 64 features");

}  // namespace hpt::rich
