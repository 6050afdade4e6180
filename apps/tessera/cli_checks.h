#pragma once
// Option checks whose messages name the rule and the value given ("--timeout: must be a
// positive number, got -5"), in place of CLI11's numeric ranges, which print their
// bounds as 300-digit numbers.

#include <CLI/CLI.hpp>

#include <string>

namespace tessera::app {

namespace detail {
inline CLI::Validator number_check(const char* name, const char* rule, bool (*accept)(double)) {
  return CLI::Validator(
      [rule, accept](std::string& text) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(text, value)) return "'" + text + "' is not a number";
        if (!accept(value)) return std::string("must be ") + rule + ", got " + text;
        return {};
      },
      name);
}
}  // namespace detail

/// A number > 0.
inline const CLI::Validator kPositive =
    detail::number_check("POSITIVE", "a positive number", [](double v) { return v > 0.0; });
/// A number >= 0.
inline const CLI::Validator kNonNegative =
    detail::number_check("NON-NEGATIVE", "zero or more", [](double v) { return v >= 0.0; });

/// `--json` on commands whose output is always JSON lines: accepted like the other commands'
/// flag; a value that is not a flag's (`--json=vs`) is a usage error (exit code 2) like theirs.
inline void add_json_always_on(CLI::App* cmd) {
  static bool ignored = false;
  cmd->add_flag("--json", ignored, "JSON lines (always on)");
}

}  // namespace tessera::app
