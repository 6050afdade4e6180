#pragma once
/// @file guard.h
/// Turns an error on any rank into the end of the whole job, with a message and a
/// non-zero exit code, instead of a hang of the other ranks in their next collective.
///
/// @code
///   int main(int argc, char** argv) {
///     return tessera::dist::run_guarded([&] { return real_main(argc, argv); });
///   }
/// @endcode

#include <exception>
#include <functional>

namespace tessera::dist {

/// Exit codes of the `tessera` tool and of guarded programs.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,       ///< unexpected error
  kExitInputError = 2,    ///< invalid input, parse error, dimension mismatch, unsupported
  kExitNumerical = 3,     ///< a numerical outcome the user must see (singular, not converged)
  kExitDistributed = 4,   ///< a collective or launch problem
  kExitResource = 5,      ///< a resource cap was hit (`--memory-cap`: ResourceExhausted)
};

/// Exit code for an exception thrown by tessera (or anything else: kExitFailure).
int exit_code_for(const std::exception& error);

/// Runs `body` on the world communicator's process. An exception is printed as
/// `tessera: error on rank R of P: ...`; with more than one rank the whole job is
/// aborted (MPI_Abort) with the exception's exit code. Also installs a terminate
/// handler that does the same for exceptions escaping other threads.
int run_guarded(const std::function<int()>& body);

}  // namespace tessera::dist
