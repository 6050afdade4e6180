#include "tessera/dist/guard.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/dist/communicator.h"

namespace tessera::dist {
namespace {

std::string describe(const std::exception& error) {
  auto comm = world();
  return "tessera: error on rank " + std::to_string(comm->rank()) + " of " +
         std::to_string(comm->size()) + ": " + error.what();
}

[[noreturn]] void end_job(int code, const std::string& message) {
  auto comm = world();
  comm->abort(code, message);  // size 1: print and exit; MPI: print and MPI_Abort
  std::_Exit(code);            // not reached: abort() does not return
}

void on_terminate() {
  std::string message = "tessera: terminated";
  int code = kExitFailure;
  if (auto current = std::current_exception()) {
    try {
      std::rethrow_exception(current);
    } catch (const std::exception& error) {
      message = describe(error);
      code = exit_code_for(error);
    } catch (...) {
      message = "tessera: terminated by an unknown exception";
    }
  }
  end_job(code, message);
}

}  // namespace

int exit_code_for(const std::exception& error) {
  if (dynamic_cast<const DistributedError*>(&error)) return kExitDistributed;
  if (dynamic_cast<const ResourceExhausted*>(&error)) return kExitResource;
  if (dynamic_cast<const InvalidInput*>(&error) || dynamic_cast<const ParseError*>(&error) ||
      dynamic_cast<const DimensionMismatch*>(&error) || dynamic_cast<const Unsupported*>(&error) ||
      dynamic_cast<const NotCompiled*>(&error)) {
    return kExitInputError;
  }
  return kExitFailure;
}

int run_guarded(const std::function<int()>& body) {
  std::set_terminate(on_terminate);
  try {
    int code = body();
    finalize();
    return code;
  } catch (const std::exception& error) {
    int code = exit_code_for(error);
    if (world()->size() > 1) end_job(code, describe(error));
    std::fprintf(stderr, "%s\n", describe(error).c_str());
    return code;
  }
}

}  // namespace tessera::dist
