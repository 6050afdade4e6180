// `tessera`: the command-line tool. Parses global options, sets up threads, memory
// ledger and communicator, and runs one subcommand under the distributed guard
// (run_command_line.cpp).
//
// It ends with std::_Exit once its output is flushed and MPI finalised (run_guarded): the
// exit handlers would only undo what LibTorch's static initialisers registered (thousands
// of operator kernels, deregistered one by one): ~8% of the CPU of an ACAS Xu instance
// decided at once, for nothing (bench/startup.py; history/2026-12-02-verify-startup.md).
// Every file a subcommand writes is closed when it returns.

#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "command_line.h"

int main(int argc, char** argv) {
  setenv("GLOG_minloglevel", "2", /*overwrite=*/0);  // silence torch's log noise
  const int code = tessera::app::run_command_line(argc, argv);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
#if defined(__SANITIZE_ADDRESS__)
  return code;  // the sanitizer build keeps the exit handlers: LeakSanitizer's check runs in one
#else
  std::_Exit(code);
#endif
}
