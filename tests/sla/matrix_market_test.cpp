// MatrixMarket: round trips, symmetric gradients, malformed files, the SuiteSparse matrices.

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tessera/core/error.h"
#include "tessera/core/memory_ledger.h"
#include "tessera/sla/matrix_market.h"
#include "test_util.h"

namespace tessera::sla {
namespace {

std::string temp_file(const std::string& name, const std::string& text = "") {
  std::string path = ::testing::TempDir() + "/tessera_" + name;
  std::ofstream(path) << text;   // writers overwrite it
  return path;
}

TEST(MatrixMarket, GeneralAndSymmetricRoundTrip) {
  auto a = testing::random_matrix(12, 0.3, 2.0, false, 7);
  const std::string path = temp_file("general.mtx");
  write_matrix_market(path, a);
  auto back = read_sparse_matrix_market(path);
  EXPECT_TRUE(at::equal(back.to_dense(), a.to_dense()));   // %.17g: exact
  auto s = testing::random_matrix(10, 0.3, 2.0, true, 8);
  write_matrix_market(path, s, /*symmetric=*/true);
  auto mm = read_matrix_market(path);
  EXPECT_EQ(mm.symmetry, MatrixMarketSymmetry::Symmetric);
  EXPECT_LT(mm.row.size(0), s.nnz());
  EXPECT_TRUE(at::equal(mm.to_sparse().to_dense(), s.to_dense()));
  EXPECT_THROW(write_matrix_market(path, a, true), InvalidInput);   // not symmetric
}

TEST(MatrixMarket, DenseArrayRoundTrip) {
  at::Tensor b = at::randn({6, 2}, at::kDouble);
  const std::string path = temp_file("array.mtx");
  write_dense_matrix_market(path, b);
  EXPECT_TRUE(at::equal(read_dense_matrix_market(path), b));
  write_dense_matrix_market(path, b.select(1, 0));
  EXPECT_TRUE(at::equal(read_dense_matrix_market(path), b.select(1, 0)));
}

TEST(MatrixMarket, PatternIntegerAndSkew) {
  auto p = read_matrix_market(temp_file("pattern.mtx",
      "%%MatrixMarket matrix coordinate pattern symmetric\n% comment\n3 3 3\n1 1\n2 1\n3 3\n"));
  EXPECT_TRUE(at::equal(p.to_sparse().to_dense(),
                        at::tensor({1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0}, at::kDouble).reshape({3, 3})));
  auto k = read_matrix_market(temp_file("skew.mtx", "%%MatrixMarket matrix coordinate integer skew-symmetric\n2 2 1\n2 1 5\n"));
  EXPECT_TRUE(at::equal(k.to_sparse().to_dense(), at::tensor({0.0, -5.0, 5.0, 0.0}, at::kDouble).reshape({2, 2})));
}

/// The ParseError for `text` names the file and `line`.
void expect_parse_error(const std::string& name, const std::string& text, int line) {
  const std::string path = temp_file(name, text);
  try {
    read_matrix_market(path);
    ADD_FAILURE() << name << ": no ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find(path + ":" + std::to_string(line) + ":"), std::string::npos) << e.message();
  }
}

TEST(MatrixMarket, MalformedFilesNameFileAndLine) {
  expect_parse_error("banner.mtx", "%%MatrixMarkt matrix coordinate real general\n1 1 1\n1 1 1\n", 1);
  expect_parse_error("format.mtx", "%%MatrixMarket matrix coord real general\n1 1 1\n1 1 1\n", 1);
  expect_parse_error("size.mtx", "%%MatrixMarket matrix coordinate real general\n% c\n2 x 1\n1 1 1\n", 3);
  expect_parse_error("range.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n3 1 1\n", 4);
  expect_parse_error("missing.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 1\n", 4);
  expect_parse_error("extra.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n2 2 1\n", 4);
  expect_parse_error("value.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 abc\n", 3);
  expect_parse_error("upper.mtx", "%%MatrixMarket matrix coordinate real symmetric\n2 2 1\n1 2 1\n", 3);
  expect_parse_error("empty.mtx", "", 0);
  EXPECT_THROW(read_matrix_market("/nonexistent/file.mtx"), InvalidInput);
  EXPECT_THROW(read_matrix_market(temp_file("complex.mtx", "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n")),
               Unsupported);
}

// Sizes announced by a file are checked before anything is allocated (issue #27): a header
// of 10^11 x 10^11 or of 9 x 10^11 entries in a file of a few bytes is a ParseError at its
// size line, or at the end of the file, never an allocator failure.
TEST(MatrixMarket, SizeBombsAreRefusedBeforeAllocating) {
  core::MemoryLedger::install();
  core::MemoryLedger::reset_peak();
  const int64_t before = core::MemoryLedger::peak_bytes();
  expect_parse_error("rows_bomb.mtx", "%%MatrixMarket matrix coordinate real general\n100000000000 100000000000 1\n1 1 1\n", 2);
  expect_parse_error("entries_bomb.mtx", "%%MatrixMarket matrix coordinate real general\n3 3 900000000000\n1 1 1\n", 3);
  const std::string dense = temp_file("dense_bomb.mtx", "%%MatrixMarket matrix array real general\n100000000000 100000000000\n1\n");
  try {
    read_dense_matrix_market(dense);
    ADD_FAILURE() << "dense bomb: no ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find(dense + ":2: the size line announces a dense 100000000000 x 100000000000 array"),
              std::string::npos) << e.message();
  }
  const std::string rows = temp_file("rows_bomb2.mtx", "%%MatrixMarket matrix coordinate real general\n100000000000 100000000000 1\n1 1 1\n");
  try {
    read_sparse_matrix_market(rows);
    ADD_FAILURE() << "rows bomb through read_sparse_matrix_market: no ParseError";
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find("needs at least"), std::string::npos) << e.message();
  }
  EXPECT_LT(core::MemoryLedger::peak_bytes() - before, 1 << 20) << "a bomb allocated before it was refused";
}

TEST(MatrixMarket, AnnouncedSizeAboveTheMemoryCapIsRefused) {
  core::MemoryLedger::install();
  core::MemoryLedger::set_cap(core::MemoryLedger::current_bytes() + (1 << 20));  // 1 MiB more
  const std::string path = temp_file("cap.mtx", "%%MatrixMarket matrix coordinate real general\n1000000 1000000 1\n1 1 1\n");
  try {
    read_matrix_market(path);
    ADD_FAILURE() << "no ParseError under a 1 MiB cap";
  } catch (const ParseError& e) {
    EXPECT_NE(e.message().find(path + ":2:"), std::string::npos) << e.message();
    EXPECT_NE(e.message().find("under --memory-cap"), std::string::npos) << e.message();
  }
  core::MemoryLedger::set_cap(0);
  EXPECT_NO_THROW(read_matrix_market(path));  // 8 MB of row pointers: fine without the cap
}

TEST(MatrixMarket, SuiteSparseMatricesLoad) {
  // stored = entries in the file (dwt_878 holds 4,163 incl. its diagonal; the data README says 3,285)
  struct Expected { const char* name; int64_t n; int64_t stored; bool symmetric; };
  for (const Expected& e : {Expected{"494_bus", 494, 1080, true}, Expected{"bcsstk13", 2003, 42943, true},
                            Expected{"LFAT5", 14, 30, true}, Expected{"west0067", 67, 294, false},
                            Expected{"impcol_a", 207, 572, false}, Expected{"olm1000", 1000, 3996, false},
                            Expected{"dwt_878", 878, 4163, true}}) {
    auto mm = read_matrix_market(std::string(TESSERA_SHARED_DATA) + "/matrices/" + e.name + ".mtx");
    EXPECT_EQ(mm.rows, e.n) << e.name;
    EXPECT_EQ(mm.row.size(0), e.stored) << e.name;
    EXPECT_EQ(mm.symmetry != MatrixMarketSymmetry::General, e.symmetric) << e.name;
    auto a = mm.to_sparse();
    at::Tensor d = a.to_dense();
    if (e.symmetric) EXPECT_TRUE(at::equal(d, d.t())) << e.name;
  }
}

}  // namespace
}  // namespace tessera::sla
