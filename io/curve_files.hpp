#pragma once
// Readers of loss-curve files for run.mode = forecast: the loss curves (and optional series) of a
// sweep of training runs, from HDF5 (/runs/<id>/step, /runs/<id>/loss, optional grad_norm, lr,
// val_loss: 1-D, equal length) or from a long-format CSV with the header `run,step,loss[,grad_norm,
// lr]` (rows of different runs may be interleaved). Every malformed input is one hpt::InputError
// naming the file, the run and the line (CSV, 1-based) or dataset (HDF5) and what was expected;
// with skip_bad_runs a malformed run is dropped instead and described in `skipped`.
#include <string>

#include "forecast/curve.hpp"

namespace hpt::io {

// Reads `path` as HDF5 when it starts with the HDF5 signature, else as CSV. InputError when the
// file is missing, a folder, unreadable, malformed (see above) or holds no valid run.
forecast::CurveSet read_curves(const std::string& path, bool skip_bad_runs);
// read_curves, then runs logged every few steps read step by step (forecast/curve_densify.hpp):
// what forecast, pretrain and the memory check read.
forecast::CurveSet read_curves_step_by_step(const std::string& path, bool skip_bad_runs);

forecast::CurveSet read_curves_csv(const std::string& path, bool skip_bad_runs);
forecast::CurveSet read_curves_hdf5(const std::string& path, bool skip_bad_runs);

}  // namespace hpt::io
