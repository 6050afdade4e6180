#pragma once
// The subcommands of the `tessera` tool. Each file adds one subcommand: it parses,
// converts and calls the library; no numerics live here.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

namespace tessera::app {

/// What main runs after parsing: the chosen subcommand's body, returning an exit code.
using CommandBody = std::function<int()>;

/// Each add_* registers its subcommand on `app` and sets `body` when it is chosen.
void add_info_command(CLI::App& app, CommandBody& body);
void add_solve_command(CLI::App& app, CommandBody& body);
/// `tessera eigsh` and `tessera logdet` (one process, or rows distributed under mpirun).
void add_spectral_commands(CLI::App& app, CommandBody& body);
void add_bounds_command(CLI::App& app, CommandBody& body);
void add_verify_command(CLI::App& app, CommandBody& body);
void add_bench_command(CLI::App& app, CommandBody& body);
/// `tessera serve`: keeps LibTorch loaded and runs the launcher's commands in forked
/// processes (serve_command.cpp); sets `server` when chosen.
void add_serve_command(CLI::App& app, CommandBody& body, bool& server);
/// In a command process forked by `tessera serve`: "the server at PATH (pid N)"; else "".
const std::string& served_by();

}  // namespace tessera::app
