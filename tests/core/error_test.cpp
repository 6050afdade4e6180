#include <gtest/gtest.h>

#include "tessera/core/error.h"

namespace tessera {
namespace {

TEST(Error, CheckThrowsTypedErrorWithMessageFileAndLine) {
  try {
    int rows = 3, cols = 4;
    TESSERA_CHECK(rows == cols, DimensionMismatch, "A is ", rows, "x", cols, ", not square");
    FAIL() << "no exception";
  } catch (const DimensionMismatch& e) {
    EXPECT_EQ(e.kind(), "DimensionMismatch");
    EXPECT_EQ(e.message(), "A is 3x4, not square");
    EXPECT_GT(e.line(), 0);
    std::string what = e.what();
    EXPECT_NE(what.find("DimensionMismatch: A is 3x4, not square"), std::string::npos) << what;
    EXPECT_NE(what.find("tests/core/error_test.cpp:"), std::string::npos) << what;
  }
}

TEST(Error, CheckPassesSilentlyWhenTrue) {
  EXPECT_NO_THROW(TESSERA_CHECK(1 + 1 == 2, InvalidInput, "never"));
}

TEST(Error, EveryKindIsATesseraErrorAndARuntimeError) {
  EXPECT_THROW(TESSERA_THROW(InvalidInput, "x"), Error);
  EXPECT_THROW(TESSERA_THROW(Unsupported, "x"), std::runtime_error);
  EXPECT_THROW(TESSERA_THROW(NotCompiled, "x"), NotCompiled);
  EXPECT_THROW(TESSERA_THROW(ParseError, "x"), ParseError);
  EXPECT_THROW(TESSERA_THROW(DistributedError, "x"), DistributedError);
}

TEST(Error, ConditionIsEvaluatedOnce) {
  int calls = 0;
  auto count = [&] { return ++calls > 0; };
  TESSERA_CHECK(count(), InvalidInput, "unused");
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace tessera
