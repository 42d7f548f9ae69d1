#pragma once
// The progress line of a long run, every `every` steps and at the last: step, loss, validation,
// learning rate, speed and ETA.
#include <cstdint>
#include <string>

namespace hpt::train {

class ProgressPrinter {
 public:
  ProgressPrinter(std::int64_t total_steps, int every, std::int64_t start_step)
      : total_(total_steps), every_(every), last_step_(start_step) {}
  // Prints the line of `step` when it is due; `now` is seconds since the run began, `predicted`
  // whether the step was a predicted one (its loss is NaN when it made no forward pass).
  void maybe_print(std::int64_t step, double now, double loss, bool predicted, double val_loss,
                   double val_accuracy, double lr);

 private:
  std::int64_t total_;
  int every_;
  std::int64_t last_step_;
  double last_time_ = 0;
};

// "12.3 s", "4.5 min", "2.0 h".
std::string format_seconds(double s);

}  // namespace hpt::train
