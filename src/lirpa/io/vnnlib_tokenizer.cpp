// VNN-LIB tokenizer.

#include "lirpa/io/vnnlib_tokenizer.h"

#include <cctype>
#include <cstdlib>

#include "tessera/core/error.h"

namespace tessera::lirpa::detail {
namespace {

bool symbol_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '+' || c == '.' || c == '<' ||
         c == '>' || c == '=' || c == '*' || c == '/';
}

bool looks_numeric(const std::string& s) {
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  return i < s.size() && (std::isdigit(static_cast<unsigned char>(s[i])) || s[i] == '.');
}

}  // namespace

std::vector<Token> tokenize_vnnlib(const std::string& text, const std::string& source) {
  std::vector<Token> out;
  int line = 1, col = 1;
  size_t i = 0;
  auto advance = [&](size_t n) {
    for (size_t k = 0; k < n; ++k, ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
  };
  while (i < text.size()) {
    char c = text[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      advance(1);
    } else if (c == ';') {
      while (i < text.size() && text[i] != '\n') advance(1);
    } else if (c == '(' || c == ')') {
      out.push_back({c == '(' ? Token::Open : Token::Close, std::string(1, c), 0, line, col});
      advance(1);
    } else if (symbol_char(c)) {
      size_t j = i;
      while (j < text.size() && symbol_char(text[j])) ++j;
      Token t{Token::Symbol, text.substr(i, j - i), 0, line, col};
      if (looks_numeric(t.text)) {
        char* end = nullptr;
        t.number = std::strtod(t.text.c_str(), &end);
        TESSERA_CHECK(end == t.text.c_str() + t.text.size(), ParseError, source, ":", line, ":", col,
                      ": malformed number '", t.text, "'");
        t.kind = Token::Number;
      }
      out.push_back(t);
      advance(j - i);
    } else {
      TESSERA_THROW(ParseError, source, ":", line, ":", col, ": unexpected character '", std::string(1, c), "'");
    }
  }
  out.push_back({Token::End, "", 0, line, col});
  return out;
}

}  // namespace tessera::lirpa::detail
