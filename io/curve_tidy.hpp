#pragma once
// The rules every curve file is read by, CSV or HDF5 alike (docs/outputs.md#loss-curves):
// steps out of order are sorted and a repeated step keeps its last row (a run restarted from a
// checkpoint logs its steps again), each with a note naming the run and the step; a non-finite
// loss or gradient norm is the divergence it is: the curve ends before it, with a note, and a run
// that diverged at its first step is left out with a note; validation losses likewise.
#include <string>
#include <vector>

#include "forecast/curve.hpp"

namespace hpt::io {

// A run as its rows came, in file order, with where each came from ("line 7", "entry 3").
struct RawCurve {
  forecast::Curve curve;
  std::vector<std::string> where;      // one per entry of curve.steps
  std::vector<std::string> val_where;  // one per entry of curve.val_steps
};

// Applies the rules to `raw.curve`, appending notes; false when no step is left (`notes` says why).
bool tidy_curve(RawCurve& raw, std::vector<std::string>& notes);

}  // namespace hpt::io
