// MatrixMarket reader: a line tokenizer with line numbers, the banner, the size line and
// the entries, each malformed piece reported as ParseError "file:line: ...".

#include <ATen/ATen.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/matrix_market.h"

namespace tessera::sla {
namespace {

struct Header {
  bool coordinate = true;
  MatrixMarketField field = MatrixMarketField::Real;
  MatrixMarketSymmetry symmetry = MatrixMarketSymmetry::General;
};

/// Walks the data lines of a file (comments and blank lines skipped), counting lines.
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), in_(path) {
    TESSERA_CHECK(in_.good(), InvalidInput, "cannot open MatrixMarket file '", path, "'");
    std::error_code ec;
    file_bytes_ = static_cast<int64_t>(std::filesystem::file_size(path, ec));
    if (ec) file_bytes_ = -1;  // not a regular file (a pipe): no length to check against
  }
  /// Bytes of the file after the current position; -1 when unknown.
  int64_t bytes_left() {
    if (file_bytes_ < 0) return -1;
    const auto pos = static_cast<int64_t>(in_.tellg());
    return pos < 0 ? -1 : file_bytes_ - pos;
  }
  /// Next line that is not blank and not a comment; false at end of file.
  bool next_data(std::string& line) {
    while (std::getline(in_, line)) {
      ++line_;
      auto first = std::find_if_not(line.begin(), line.end(), [](unsigned char c) { return std::isspace(c); });
      if (first == line.end() || *first == '%') continue;
      return true;
    }
    return false;
  }
  bool next_raw(std::string& line) {
    if (!std::getline(in_, line)) return false;
    ++line_;
    return true;
  }
  template <typename... Args>
  [[noreturn]] void fail(const Args&... args) const {
    TESSERA_THROW(ParseError, path_, ":", line_, ": ", args...);
  }
  int64_t line() const { return line_; }

 private:
  std::string path_;
  std::ifstream in_;
  int64_t line_ = 0;
  int64_t file_bytes_ = -1;
};

std::string gib(double bytes) {
  std::ostringstream out;
  out.precision(3);
  out << bytes / (1024.0 * 1024.0 * 1024.0) << " GiB";
  return out.str();
}

/// How many data items of at least `min_item_bytes` bytes (newline included; the last
/// line may lack one) the rest of the file can hold; -1 when the length is unknown.
double items_that_fit(LineReader& reader, int min_item_bytes) {
  const int64_t left = reader.bytes_left();
  return left < 0 ? -1.0 : std::floor((static_cast<double>(left) + 1.0) / min_item_bytes);
}

/// Refuses, at the size line, to allocate `needed_bytes` for what it `announced` when that
/// is more than this process may allocate (the machine's memory, or --memory-cap).
void check_memory(LineReader& reader, const std::string& announced, double needed_bytes) {
  const auto budget = static_cast<double>(core::MemoryLedger::allocation_budget());
  if (needed_bytes > budget)
    reader.fail("the size line announces ", announced, ", which needs at least ", gib(needed_bytes),
                ", more than the ", gib(budget), " this process may allocate",
                core::MemoryLedger::cap() > 0 ? " under --memory-cap" : " (physical memory)");
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Header parse_banner(LineReader& reader) {
  std::string line;
  if (!reader.next_raw(line)) reader.fail("empty file: expected a '%%MatrixMarket' banner");
  std::istringstream words(line);
  std::string tag, object, format, field, symmetry, extra;
  words >> tag >> object >> format >> field >> symmetry;
  if (lower(tag) != "%%matrixmarket") reader.fail("expected '%%MatrixMarket' banner, got '", line, "'");
  if (lower(object) != "matrix") reader.fail("unsupported object '", object, "' (only 'matrix')");
  Header h;
  format = lower(format);
  if (format == "array") h.coordinate = false;
  else if (format != "coordinate") reader.fail("unknown format '", format, "' (coordinate or array)");
  field = lower(field);
  if (field == "real" || field == "double") h.field = MatrixMarketField::Real;
  else if (field == "integer") h.field = MatrixMarketField::Integer;
  else if (field == "pattern" && h.coordinate) h.field = MatrixMarketField::Pattern;
  else if (field == "complex") TESSERA_THROW(Unsupported, "complex MatrixMarket files are not supported");
  else reader.fail("unknown or unsupported field '", field, "'");
  symmetry = lower(symmetry);
  if (symmetry == "general") h.symmetry = MatrixMarketSymmetry::General;
  else if (symmetry == "symmetric") h.symmetry = MatrixMarketSymmetry::Symmetric;
  else if (symmetry == "skew-symmetric") h.symmetry = MatrixMarketSymmetry::SkewSymmetric;
  else reader.fail("unknown symmetry '", symmetry, "' (general, symmetric, skew-symmetric)");
  if (words >> extra) reader.fail("unexpected word '", extra, "' in the banner");
  if (!h.coordinate && h.symmetry != MatrixMarketSymmetry::General)
    reader.fail("array files must be 'general' (right-hand sides)");
  return h;
}

/// Parses whitespace-separated numbers of one line; fails on junk or a wrong count.
class Fields {
 public:
  Fields(const std::string& line, LineReader& reader) : p_(line.c_str()), reader_(reader) {}
  int64_t integer(const char* what) {
    char* end = nullptr;
    errno = 0;
    long long v = std::strtoll(p_, &end, 10);
    if (end == p_ || errno != 0 || !(std::isspace(static_cast<unsigned char>(*end)) || *end == '\0'))
      reader_.fail("expected an integer ", what);
    p_ = end;
    return v;
  }
  double real(const char* what) {
    char* end = nullptr;
    double v = std::strtod(p_, &end);
    if (end == p_ || !(std::isspace(static_cast<unsigned char>(*end)) || *end == '\0'))
      reader_.fail("expected a number ", what);
    p_ = end;
    return v;
  }
  void finish() {
    while (std::isspace(static_cast<unsigned char>(*p_))) ++p_;
    if (*p_ != '\0') reader_.fail("unexpected trailing text '", p_, "'");
  }

 private:
  const char* p_;
  LineReader& reader_;
};

void read_entries(LineReader& reader, const Header& h, MatrixMarketCoordinate& m, int64_t count) {
  // A count larger than the file can hold is not reserved: reading stops at the end of the
  // file with "missing entries".
  const double fit = items_that_fit(reader, h.field == MatrixMarketField::Pattern ? 4 : 6);
  const auto reserved = static_cast<size_t>(fit < 0 ? 0.0 : std::min(fit, static_cast<double>(count)));
  std::vector<int64_t> rows, cols;
  std::vector<double> vals;
  rows.reserve(reserved);
  cols.reserve(reserved);
  vals.reserve(reserved);
  std::string line;
  for (int64_t e = 0; e < count; ++e) {
    if (!reader.next_data(line)) reader.fail("missing entries: expected ", count, ", found ", e);
    Fields f(line, reader);
    const int64_t i = f.integer("(row index)"), j = f.integer("(column index)");
    const double v = h.field == MatrixMarketField::Pattern ? 1.0 : f.real("(value)");
    f.finish();
    if (i < 1 || i > m.rows || j < 1 || j > m.cols)
      reader.fail("entry (", i, ", ", j, ") out of range for a ", m.rows, " x ", m.cols, " matrix");
    if (h.symmetry == MatrixMarketSymmetry::Symmetric && i < j)
      reader.fail("symmetric storage must hold the lower triangle, got (", i, ", ", j, ")");
    if (h.symmetry == MatrixMarketSymmetry::SkewSymmetric && i <= j)
      reader.fail("skew-symmetric storage must hold the strict lower triangle, got (", i, ", ", j, ")");
    rows.push_back(i - 1);
    cols.push_back(j - 1);
    vals.push_back(v);
  }
  if (reader.next_data(line)) reader.fail("more entries than the ", count, " declared in the size line");
  m.row = at::tensor(rows, at::kLong);
  m.col = at::tensor(cols, at::kLong);
  m.values = at::tensor(vals, at::kDouble);
}

}  // namespace

MatrixMarketCoordinate read_matrix_market(const std::string& path) {
  LineReader reader(path);
  Header h = parse_banner(reader);
  if (!h.coordinate) reader.fail("expected a coordinate (sparse) matrix, got an array file");
  std::string line;
  if (!reader.next_data(line)) reader.fail("missing size line 'rows cols entries'");
  Fields f(line, reader);
  MatrixMarketCoordinate m;
  m.rows = f.integer("(rows)");
  m.cols = f.integer("(columns)");
  const int64_t count = f.integer("(entries)");
  f.finish();
  if (m.rows < 0 || m.cols < 0 || count < 0) reader.fail("negative size");
  // Reading holds a row, a column and a value per entry (24 bytes); the CSR matrix built
  // from it has rows + 1 row pointers; symmetric storage is mirrored (twice the entries).
  const double mirrored = h.symmetry == MatrixMarketSymmetry::General ? 1.0 : 2.0;
  std::ostringstream announced;
  announced << "a " << m.rows << " x " << m.cols << " matrix with " << count << " entries";
  double entries = static_cast<double>(count);
  if (double fit = items_that_fit(reader, h.field == MatrixMarketField::Pattern ? 4 : 6); fit >= 0)
    entries = std::min(entries, fit);  // more than the file holds ends as "missing entries"
  check_memory(reader, announced.str(), 8.0 * (static_cast<double>(m.rows) + 1.0) + 24.0 * mirrored * entries);
  if (h.symmetry != MatrixMarketSymmetry::General && m.rows != m.cols)
    reader.fail("a symmetric matrix must be square, got ", m.rows, " x ", m.cols);
  m.symmetry = h.symmetry;
  m.field = h.field;
  read_entries(reader, h, m, count);
  return m;
}

at::Tensor read_dense_matrix_market(const std::string& path) {
  LineReader reader(path);
  Header h = parse_banner(reader);
  if (h.coordinate) {
    at::Tensor dense = read_matrix_market(path).to_sparse().to_dense();
    return dense.size(1) == 1 ? dense.squeeze(1) : dense;
  }
  std::string line;
  if (!reader.next_data(line)) reader.fail("missing size line 'rows cols'");
  Fields f(line, reader);
  const int64_t rows = f.integer("(rows)"), cols = f.integer("(columns)");
  f.finish();
  if (rows < 0 || cols < 0) reader.fail("negative size");
  const double values = static_cast<double>(rows) * static_cast<double>(cols);
  std::ostringstream announced;
  announced << "a dense " << rows << " x " << cols << " array";
  // The array is allocated before it is read: its values must fit in the file first.
  if (double fit = items_that_fit(reader, 2); fit >= 0 && values > fit)
    reader.fail("the size line announces ", announced.str(), ", but the rest of the file holds at most ",
                static_cast<int64_t>(fit), " values");
  check_memory(reader, announced.str(), 16.0 * values);  // read + transposed copy
  at::Tensor out = at::empty({cols, rows}, at::kDouble);   // column-major in the file
  double* p = out.data_ptr<double>();
  for (int64_t e = 0; e < rows * cols; ++e) {
    if (!reader.next_data(line)) reader.fail("missing values: expected ", rows * cols, ", found ", e);
    Fields v(line, reader);
    p[e] = v.real("(value)");
    v.finish();
  }
  if (reader.next_data(line)) reader.fail("more values than the ", rows * cols, " declared");
  out = out.t().contiguous();
  return cols == 1 ? out.squeeze(1) : out;
}

SparseTensor MatrixMarketCoordinate::to_sparse(const at::Tensor& stored_values) const {
  at::Tensor v = stored_values.defined() ? stored_values : values;
  TESSERA_CHECK(v.size(-1) == row.size(0), DimensionMismatch, "to_sparse: ", row.size(0),
                " stored entries but values have ", v.size(-1));
  if (symmetry == MatrixMarketSymmetry::General) return SparseTensor::from_coo(v, row, col, rows, cols);
  return SparseTensor::from_symmetric_coo(v, row, col, rows, symmetry == MatrixMarketSymmetry::SkewSymmetric);
}

SparseTensor read_sparse_matrix_market(const std::string& path, at::ScalarType dtype) {
  return read_matrix_market(path).to_sparse().to(dtype);
}

}  // namespace tessera::sla
