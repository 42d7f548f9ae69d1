#pragma once
// What a data-parallel run (mpirun -np N hpt ..., N > 1) supports, checked before any work.
#include <string>

#include "core/config.hpp"

namespace hpt::app {

// InputError naming the key when the deck asks for what N processes cannot do yet: a run.mode other
// than train, compare or forecast, or for train and compare a train.batch_size (the global
// minibatch) not divisible by N.
void check_parallel_inputs(const Config& config, const std::string& mode, int ranks);

}  // namespace hpt::app
