// Standalone build of `tessera bench amg` that links tessera_sla only (the `tessera` tool
// also links lirpa): build/bench_amg amg [--n N ...] [--case C] [--json].

#include "../apps/tessera/bench_amg.cpp"
#include "../apps/tessera/bench_stream.cpp"

#include "tessera/core/threads.h"

int main(int argc, char** argv) {
  CLI::App app{"AMG / IC(0) / ILU(0) preconditioned Krylov benchmarks"};
  tessera::app::CommandBody body;
  tessera::app::add_bench_amg(app, body);
  app.require_subcommand(1);
  CLI11_PARSE(app, argc, argv);
  tessera::core::MemoryLedger::install();
  tessera::core::setup_threads(0);
  return body();
}
