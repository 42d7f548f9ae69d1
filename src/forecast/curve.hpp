#pragma once
// The loss curves of a sweep of training runs that run.mode = forecast replays (read by
// io/curve_files).
#include <string>
#include <vector>

namespace hpt::forecast {

struct Curve {
  std::string id;                 // verbatim from the file, whatever characters it holds
  std::string group;              // runs of one problem; "" when the file names none
  std::string split;              // HDF5 run attribute `split` (e.g. tune, heldout); "" if none
  std::vector<long long> steps;   // strictly increasing
  std::vector<double> loss;       // finite, >= 0
  std::vector<double> grad_norm;  // empty when absent, else the length of steps
  std::vector<double> lr;         // empty when absent, else the length of steps
  // Validation losses at their own steps (strictly increasing; finite, >= 0); empty when absent.
  std::vector<long long> val_steps;
  std::vector<double> val_loss;
  bool diverged = false;  // the file's curve went on to a non-finite loss; it ends before it
  // Empty when every entry was logged; else 1 for the logged entries and 0 for those filled in
  // between them (forecast/curve_densify.hpp).
  std::vector<char> logged;
  long long logged_every = 1;  // the median spacing of the logged steps (densified runs)
};

struct CurveSet {
  std::vector<Curve> runs;           // in file order (HDF5: sorted by id)
  std::vector<std::string> skipped;  // "run 'x': why" for each run dropped by skip_bad_runs
  // What was read differently from the file as written: ignored columns, sorted or repeated
  // steps, divergences, a partial last line. One line each, printed as notes.
  std::vector<std::string> notes;
};

// The number of entries of `c` at steps <= t.
int entries_upto(const Curve& c, long long t);

// Whether entry i of `c` was logged (not filled in between logged steps).
inline bool logged_entry(const Curve& c, int i) {
  return c.logged.empty() || c.logged[std::size_t(i)] != 0;
}

// The number of entries up to the newest logged one among the first n (n when every entry was
// logged): a history that reads no loss logged after its newest logged step.
int logged_upto(const Curve& c, int n);

// Whether entry i is an origin of a forecast made every `every` steps: a logged entry whose step is
// a multiple of `every`, or for a densified run the first logged entry at or after such a multiple
// (a run logged at steps 49, 99, ... has origins there for every = 50).
bool origin_entry(const Curve& c, int i, long long every);

// The first step at or after `step` whose entry was logged (`step` itself when every entry was,
// or when none is left).
long long first_logged_from(const Curve& c, long long step);

// The validation loss of `c` recorded at step `step`, or NaN.
double validation_at(const Curve& c, long long step);

}  // namespace hpt::forecast
