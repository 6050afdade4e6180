#pragma once
// VNN-LIB tokenizer: parentheses, symbols and numbers with their line and column;
// comments run from ';' to the end of the line.

#include <string>
#include <vector>

namespace tessera::lirpa::detail {

struct Token {
  enum Kind { Open, Close, Symbol, Number, End } kind = End;
  std::string text;
  double number = 0;
  int line = 1, column = 1;
};

/// Splits `text` into tokens; throws ParseError (with `source`, line, column) on bad input.
std::vector<Token> tokenize_vnnlib(const std::string& text, const std::string& source);

}  // namespace tessera::lirpa::detail
