// VNN-LIB recursive-descent parser: commands, formulas in disjunctive normal form, and the
// grouping of conjunctions into input boxes with their output constraints.

#include <ATen/ATen.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "lirpa/io/vnnlib_tokenizer.h"
#include "tessera/core/error.h"
#include "tessera/lirpa/vnnlib.h"

namespace tessera::lirpa {
namespace detail {
namespace {

constexpr size_t kMaxConjunctions = 100000;
/// Formulas and terms nested deeper than this are refused (the parser recurses on them).
constexpr int kMaxDepth = 1000;
/// Variable indices at or above this are refused before anything is sized by them.
constexpr int kMaxVariableIndex = 100000000;

/// sum coef_v v + constant, v = ('X' | 'Y', index)
struct LinearExpr {
  std::map<std::pair<char, int>, double> coef;
  double constant = 0;
};

/// expr <= 0
struct Atom {
  LinearExpr expr;
  int line = 0, column = 0;
};

using Dnf = std::vector<std::vector<Atom>>;

LinearExpr combine(const LinearExpr& a, const LinearExpr& b, double sb) {
  LinearExpr out = a;
  for (auto& [v, c] : b.coef) out.coef[v] += sb * c;
  out.constant += sb * b.constant;
  return out;
}

class Parser {
 public:
  Parser(std::vector<Token> tokens, std::string source) : t_(std::move(tokens)), source_(std::move(source)) {}

  Dnf parse_file() {
    Dnf all{{}};
    while (peek().kind != Token::End) {
      expect(Token::Open, "'('");
      const Token& cmd = expect(Token::Symbol, "a command");
      if (cmd.text == "declare-const") {
        declare();
      } else if (cmd.text == "assert") {
        conjoin_into(all, formula());
        expect(Token::Close, "')'");
      } else {
        fail(cmd, "unknown command '" + cmd.text + "' (expected declare-const or assert)");
      }
    }
    return all;
  }
  int n_inputs = 0, n_outputs = 0;

  /// Throws ParseError unless X_0..X_{n_inputs-1} and Y_0..Y_{n_outputs-1} are all declared
  /// (so the sizes, and what is allocated from them, are bounded by the file's length).
  void check_declared_contiguously() const {
    std::set<std::pair<char, int>> seen;
    for (const auto& [name, v] : declared_) seen.insert(v);
    for (char kind : {'X', 'Y'}) {
      const int n = kind == 'X' ? n_inputs : n_outputs;
      for (int i = 0; i < n; ++i)
        TESSERA_CHECK(seen.count({kind, i}), ParseError, source_, ": ", kind, "_", n - 1, " is declared but ", kind,
                      "_", i, " is not");
    }
  }
  [[noreturn]] void fail(const Token& at, const std::string& what) const {
    TESSERA_THROW(ParseError, source_, ":", at.line, ":", at.column, ": ", what);
  }

 private:
  const Token& peek() const { return t_[pos_]; }
  const Token& expect(Token::Kind kind, const char* what) {
    const Token& t = t_[pos_];
    if (t.kind != kind) fail(t, std::string("expected ") + what + (t.kind == Token::End ? " before end of input" : ", found '" + t.text + "'"));
    ++pos_;
    return t;
  }

  void declare() {
    const Token& name = expect(Token::Symbol, "a variable name");
    const Token& type = expect(Token::Symbol, "a type");
    if (type.text != "Real") fail(type, "unsupported type '" + type.text + "' (only Real)");
    auto v = variable(name);
    int& n = v.first == 'X' ? n_inputs : n_outputs;
    n = std::max(n, v.second + 1);
    declared_.insert({name.text, v});
    expect(Token::Close, "')'");
  }

  std::pair<char, int> variable(const Token& t) const {
    const std::string& s = t.text;
    if (s.size() < 3 || (s[0] != 'X' && s[0] != 'Y') || s[1] != '_' ||
        s.find_first_not_of("0123456789", 2) != std::string::npos)
      fail(t, "variable names must be X_<i> or Y_<j>, found '" + s + "'");
    // At most 9 digits, so std::stol cannot overflow.
    const std::string digits = s.substr(2);
    if (digits.size() > 9 || std::stol(digits) >= kMaxVariableIndex)
      fail(t, "variable index of '" + s + "' is too large (at most " + std::to_string(kMaxVariableIndex - 1) + ")");
    return {s[0], static_cast<int>(std::stol(digits))};
  }

  // a = a & b. A single conjunction b (one assert of an input bound, the common case) is
  // appended in place: copying `a` for each of a file's thousands of asserts was quadratic.
  static void conjoin_into(Dnf& a, Dnf b) {
    if (b.size() == 1) {
      for (auto& x : a) x.insert(x.end(), b[0].begin(), b[0].end());
      return;
    }
    a = conjoin(a, b);
  }

  static Dnf conjoin(const Dnf& a, const Dnf& b) {  // (a1 | a2) & (b1 | b2) = a1b1 | a1b2 | ...
    Dnf out;
    for (const auto& x : a)
      for (const auto& y : b) {
        out.push_back(x);
        out.back().insert(out.back().end(), y.begin(), y.end());
      }
    TESSERA_CHECK(out.size() <= kMaxConjunctions, Unsupported, "property expands to more than ",
                  kMaxConjunctions, " conjunctions");
    return out;
  }

  /// Counts the nesting of formula() and term() while one is on the stack.
  struct DepthGuard {
    Parser& p;
    DepthGuard(Parser& parser, const Token& at) : p(parser) {
      if (++p.depth_ > kMaxDepth) p.fail(at, "nested more than " + std::to_string(kMaxDepth) + " levels deep");
    }
    ~DepthGuard() { --p.depth_; }
  };

  Dnf formula() {
    DepthGuard guard(*this, peek());
    const Token& open = expect(Token::Open, "'(' starting a formula");
    const Token& op = expect(Token::Symbol, "and, or, <= or >=");
    Dnf out;
    if (op.text == "and" || op.text == "or") {
      out = op.text == "and" ? Dnf{{}} : Dnf{};
      while (peek().kind != Token::Close) {
        Dnf f = formula();
        if (op.text == "and") conjoin_into(out, std::move(f));
        else out.insert(out.end(), f.begin(), f.end());
      }
    } else if (op.text == "<=" || op.text == ">=" || op.text == "<" || op.text == ">") {
      LinearExpr a = term(), b = term();
      bool le = op.text[0] == '<';
      out = {{Atom{le ? combine(a, b, -1) : combine(b, a, -1), open.line, open.column}}};  // a - b <= 0
    } else {
      fail(op, "unknown operator '" + op.text + "' (expected and, or, <=, >=)");
    }
    expect(Token::Close, "')'");
    return out;
  }

  LinearExpr term() {
    DepthGuard guard(*this, peek());
    const Token& t = t_[pos_];
    if (t.kind == Token::Number) {
      ++pos_;
      LinearExpr e;
      e.constant = t.number;
      return e;
    }
    if (t.kind == Token::Symbol) {
      ++pos_;
      auto it = declared_.find(t.text);
      if (it == declared_.end()) fail(t, "undeclared variable '" + t.text + "'");
      LinearExpr e;
      e.coef[it->second] = 1;
      return e;
    }
    expect(Token::Open, "a number, a variable or '('");
    const Token& op = expect(Token::Symbol, "+, - or *");
    std::vector<LinearExpr> args;
    while (peek().kind != Token::Close) args.push_back(term());
    expect(Token::Close, "')'");
    if (args.empty()) fail(op, "operator '" + op.text + "' needs arguments");
    if (op.text == "+" || op.text == "-") {
      if (op.text == "-" && args.size() == 1) return combine(LinearExpr{}, args[0], -1);
      LinearExpr e = args[0];
      for (size_t i = 1; i < args.size(); ++i) e = combine(e, args[i], op.text == "+" ? 1 : -1);
      return e;
    }
    if (op.text == "*" && args.size() == 2 && (args[0].coef.empty() || args[1].coef.empty())) {
      const LinearExpr& k = args[0].coef.empty() ? args[0] : args[1];
      return combine(LinearExpr{}, args[0].coef.empty() ? args[1] : args[0], k.constant);
    }
    fail(op, "unsupported term operator '" + op.text + "' (linear terms only)");
  }

  std::vector<Token> t_;
  size_t pos_ = 0;
  std::string source_;
  std::map<std::string, std::pair<char, int>> declared_;
  int depth_ = 0;
};

// Splits one conjunction into a box (from single-X atoms) and output rows (Y atoms).
void split_conjunction(const Parser& p, const std::vector<Atom>& atoms, const std::string& source,
                       std::vector<double>& lo, std::vector<double>& hi, std::vector<std::vector<double>>& rows,
                       std::vector<double>& rhs) {
  for (const Atom& a : atoms) {
    bool has_x = false, has_y = false;
    for (auto& [v, c] : a.expr.coef) {
      if (c == 0) continue;
      (v.first == 'X' ? has_x : has_y) = true;
    }
    Token at{Token::Symbol, "", 0, a.line, a.column};
    if (has_x && has_y) p.fail(at, "constraints mixing inputs and outputs are not supported");
    if (has_x) {
      if (a.expr.coef.size() != 1) p.fail(at, "input constraints must bound one variable");
      auto [v, c] = *a.expr.coef.begin();
      double bound = -a.expr.constant / c;  // c x + k <= 0
      if (c > 0) hi[v.second] = std::min(hi[v.second], bound);
      else lo[v.second] = std::max(lo[v.second], bound);
    } else if (has_y) {
      std::vector<double> row(p.n_outputs, 0.0);
      for (auto& [v, c] : a.expr.coef)
        if (v.first == 'Y') row[v.second] += c;  // X terms here have coefficient 0
      rows.push_back(row);
      rhs.push_back(-a.expr.constant);  // c y <= -k
    } else if (a.expr.constant > 0) {
      rows.push_back(std::vector<double>(p.n_outputs, 0.0));  // constant false constraint: 0 <= -k
      rhs.push_back(-a.expr.constant);
    }
  }
  (void)source;
}

at::Tensor vec(const std::vector<double>& v) { return at::tensor(v, at::kDouble); }

}  // namespace
}  // namespace detail

at::Tensor PropertyCase::spec_matrix() const {
  std::vector<at::Tensor> parts;
  for (const auto& d : disjuncts) parts.push_back(d.c);
  return parts.empty() ? at::Tensor() : at::cat(parts);
}

at::Tensor PropertyCase::spec_rhs() const {
  std::vector<at::Tensor> parts;
  for (const auto& d : disjuncts) parts.push_back(d.rhs);
  return parts.empty() ? at::Tensor() : at::cat(parts);
}

Property parse_vnnlib(const std::string& text, const std::string& source) {
  detail::Parser parser(detail::tokenize_vnnlib(text, source), source);
  detail::Dnf dnf = parser.parse_file();
  parser.check_declared_contiguously();
  TESSERA_CHECK(parser.n_inputs > 0 && parser.n_outputs > 0, ParseError, source,
                ": the property declares no X_ or no Y_ variables");
  Property prop;
  prop.n_inputs = parser.n_inputs;
  prop.n_outputs = parser.n_outputs;
  std::map<std::pair<std::vector<double>, std::vector<double>>, size_t> case_of;
  for (const auto& conj : dnf) {
    std::vector<double> lo(prop.n_inputs, -INFINITY), hi(prop.n_inputs, INFINITY), rhs;
    std::vector<std::vector<double>> rows;
    detail::split_conjunction(parser, conj, source, lo, hi, rows, rhs);
    for (int64_t i = 0; i < prop.n_inputs; ++i) {
      TESSERA_CHECK(std::isfinite(lo[i]) && std::isfinite(hi[i]), ParseError, source, ": input X_", i,
                    " has no ", std::isfinite(lo[i]) ? "upper" : "lower", " bound");
    }
    bool empty_box = false;
    for (int64_t i = 0; i < prop.n_inputs && !empty_box; ++i) {
      if (lo[i] <= hi[i]) continue;
      empty_box = true;
      std::ostringstream w;
      w.precision(17);
      w << source << ": input X_" << i << " has lower bound " << lo[i] << " above its upper bound "
        << hi[i] << ": that input box is empty and can hold no counterexample";
      prop.warnings.push_back(w.str());
    }
    if (empty_box) continue;  // an empty box cannot hold a counterexample
    auto key = std::make_pair(lo, hi);
    auto it = case_of.find(key);
    if (it == case_of.end()) {
      it = case_of.emplace(key, prop.cases.size()).first;
      prop.cases.push_back(PropertyCase{detail::vec(lo), detail::vec(hi), {}});
    }
    OutputConjunction oc;
    std::vector<double> flat;
    for (auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
    oc.c = detail::vec(flat).reshape({static_cast<int64_t>(rows.size()), prop.n_outputs});
    oc.rhs = detail::vec(rhs);
    prop.cases[it->second].disjuncts.push_back(oc);
  }
  return prop;
}

void check_property_sizes(const Property& p, int64_t n_inputs, int64_t n_outputs, const std::string& what) {
  TESSERA_CHECK(p.n_inputs == n_inputs && p.n_outputs == n_outputs, DimensionMismatch, what, ": the property has ",
                p.n_inputs, " inputs and ", p.n_outputs, " outputs but the network has ", n_inputs, " and ", n_outputs);
}

Property load_vnnlib(const std::string& path) {
  std::ifstream in(path);
  TESSERA_CHECK(in.good(), InvalidInput, "cannot open VNN-LIB file '", path, "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_vnnlib(ss.str(), path);
}

}  // namespace tessera::lirpa
