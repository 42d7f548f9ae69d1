#pragma once
// SIGTERM and SIGUSR1 (sent by batch schedulers before a time limit) request a checkpoint at the
// next step boundary and a clean stop; SIGINT does the same from a terminal.
namespace hpt::train {

// Installs the handlers (idempotent). The handler only sets a flag; the loop polls it.
void install_stop_handlers();
// The signal number received, or 0.
int stop_signal_received();
// Clears the flag (tests).
void reset_stop_signal();

}  // namespace hpt::train
