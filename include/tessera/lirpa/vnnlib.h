#pragma once
/// @file vnnlib.h
/// VNN-LIB properties: input boxes and output constraints.
///
/// A property describes the unsafe region: it is violated (`sat`) when some input in one
/// of its boxes makes the outputs satisfy one of its output conjunctions. The parser is a
/// tokenizer plus recursive descent; malformed text throws `ParseError` naming the source,
/// line and column.
///
/// @code
///   Property p = tessera::lirpa::load_vnnlib("prop_1.vnnlib");
///   for (const auto& c : p.cases) {            // disjunction of input boxes
///     at::Tensor spec = c.spec_matrix();       // rows of every output constraint
///   }
/// @endcode

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

namespace tessera::lirpa {

/// A conjunction of linear output constraints: c y <= rhs for every row.
struct OutputConjunction {
  at::Tensor c;    ///< [K, n_outputs] float64
  at::Tensor rhs;  ///< [K] float64
};

/// One input box and the output disjunction that applies in it.
struct PropertyCase {
  at::Tensor lower;  ///< [n_inputs] float64
  at::Tensor upper;  ///< [n_inputs] float64
  std::vector<OutputConjunction> disjuncts;
  /// All rows of all disjuncts stacked, [sum K, n_outputs] (the specification C matrix).
  at::Tensor spec_matrix() const;
  /// Their right-hand sides, [sum K].
  at::Tensor spec_rhs() const;
};

/// A parsed property: the disjunction of its cases.
struct Property {
  int64_t n_inputs = 0;
  int64_t n_outputs = 0;
  std::vector<PropertyCase> cases;
  /// Things that are legal but almost always a mistake in the file, one sentence each
  /// (an input box whose lower bound is above its upper bound: an empty set, dropped, so a
  /// property of only such boxes is unsat). The CLI prints them as warnings.
  std::vector<std::string> warnings;
};

/// Throws DimensionMismatch unless the property has `n_inputs` inputs and `n_outputs`
/// outputs (those of the network it is checked against); `what` names both in the message.
void check_property_sizes(const Property& property, int64_t n_inputs, int64_t n_outputs, const std::string& what);

/// Parses VNN-LIB text; `source` names it in error messages.
Property parse_vnnlib(const std::string& text, const std::string& source = "<vnnlib>");
/// Reads and parses a file.
Property load_vnnlib(const std::string& path);

}  // namespace tessera::lirpa
