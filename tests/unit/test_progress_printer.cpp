// The progress line: printed when due, a predicted step's missing loss shown as such, a real
// step's non-finite loss shown as the number it is.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>

#include "train/progress_printer.hpp"

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// What maybe_print writes to std::cout for one call.
std::string printed(hpt::train::ProgressPrinter& p, std::int64_t step, double loss, bool predicted,
                    double val_loss = kNaN) {
  std::ostringstream out;
  std::streambuf* old = std::cout.rdbuf(out.rdbuf());
  p.maybe_print(step, 1.0, loss, predicted, val_loss, 0.5, 0.01);
  std::cout.rdbuf(old);
  return out.str();
}

TEST(ProgressPrinter, PrintsEveryStepsAndAtTheLast) {
  hpt::train::ProgressPrinter p(250, 100, 0);
  EXPECT_EQ(printed(p, 99, 0.5, false), "");
  EXPECT_NE(printed(p, 100, 0.5, false).find("step      100/250  loss 0.50000  val -"),
            std::string::npos);
  EXPECT_EQ(printed(p, 150, 0.5, false), "");
  EXPECT_NE(printed(p, 250, 0.5, false, 0.25).find("val 0.25000  acc  50.00%"), std::string::npos);
}

TEST(ProgressPrinter, PredictedStepWithoutLossIsNotShownAsNaN) {
  hpt::train::ProgressPrinter p(1000, 100, 0);
  const std::string predicted = printed(p, 100, kNaN, true);
  EXPECT_NE(predicted.find("loss - (predicted)"), std::string::npos) << predicted;
  EXPECT_EQ(predicted.find("nan"), std::string::npos) << predicted;
  // A predicted step that drew its minibatch has a loss, shown as on a real step.
  EXPECT_NE(printed(p, 200, 0.125, true).find("loss 0.12500"), std::string::npos);
  // A real step's non-finite loss is a fault and is shown.
  EXPECT_NE(printed(p, 300, kNaN, false).find("loss nan"), std::string::npos);
  EXPECT_NE(printed(p, 400, std::numeric_limits<double>::infinity(), false).find("loss inf"),
            std::string::npos);
}

}  // namespace
