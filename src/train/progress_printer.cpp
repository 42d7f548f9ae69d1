#include "train/progress_printer.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>

namespace hpt::train {

std::string format_seconds(double s) {
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.1f s", s);
  else if (s < 7200)
    std::snprintf(buf, sizeof buf, "%.1f min", s / 60);
  else
    std::snprintf(buf, sizeof buf, "%.1f h", s / 3600);
  return buf;
}

void ProgressPrinter::maybe_print(std::int64_t step, double now, double loss, bool predicted,
                                  double val_loss, double val_accuracy, double lr) {
  if (step % every_ != 0 && step != total_) return;
  const double rate = double(step - last_step_) / std::max(1e-9, now - last_time_);
  char line[256];
  char val[64] = "val -";
  if (std::isfinite(val_loss))
    std::snprintf(val, sizeof val, "val %.5f  acc %6.2f%%", val_loss, 100.0 * val_accuracy);
  // A predicted step without a forward pass has no loss; a real step's non-finite one is shown.
  char loss_text[32] = "- (predicted)";
  if (!predicted || std::isfinite(loss)) std::snprintf(loss_text, sizeof loss_text, "%.5f", loss);
  std::snprintf(line, sizeof line, "step %8lld/%lld  loss %s  %s  lr %.4g  %.1f steps/s  ETA %s",
                static_cast<long long>(step), static_cast<long long>(total_), loss_text, val, lr,
                rate, format_seconds(double(total_ - step) / std::max(rate, 1e-9)).c_str());
  std::cout << line << std::endl;
  last_time_ = now;
  last_step_ = step;
}

}  // namespace hpt::train
