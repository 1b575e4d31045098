// The pure parts of pg_db.h: the SQLSTATE -> Status table and array literals (the connection
// itself is tested against a real server in tests/integration/tracker_postgres_test.cc).
#include "tracker/postgres/pg_db.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace ferry::tracker::postgres {
namespace {

using ::testing::HasSubstr;

TEST(PostgresErrorTest, LostConnectionsAndRestartsAreRetryable) {
  for (const char* state :
       {"08006", "08001", "57P01", "57P03", "53300", "40001", "40P01", "55P03", "57014"}) {
    Status s = PostgresError(state, false, "LogBatch", "terminating connection");
    EXPECT_EQ(s.code(), StatusCode::kUnavailable) << state;
    EXPECT_TRUE(IsRetryable(s)) << state;
    EXPECT_THAT(s.message(), HasSubstr("LogBatch: terminating connection"));
  }
  EXPECT_EQ(PostgresError("", true, "BEGIN", "server closed the connection").code(),
            StatusCode::kUnavailable);
}

TEST(PostgresErrorTest, OtherErrorsKeepTheirMeaning) {
  EXPECT_EQ(PostgresError("23505", false, "op", "duplicate key").code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(PostgresError("53100", false, "op", "disk full").code(),
            StatusCode::kResourceExhausted);
  Status s = PostgresError("42P01", false, "op", "relation \"x\" does not exist");
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_THAT(s.message(), HasSubstr("(SQLSTATE 42P01)"));
}

TEST(PostgresErrorTest, MessagesAreScrubbedOfCredentials) {
  Status s = PostgresError("", true, "connect to 'postgresql://ann:pw-secret-123@h/db'", "refused");
  EXPECT_THAT(s.message(), ::testing::Not(HasSubstr("pw-secret-123")));
}

TEST(PostgresArrayTest, IntegerAndTextLiterals) {
  EXPECT_EQ(*IntArray({}), "{}");
  EXPECT_EQ(*IntArray({1, -2, 9223372036854775807}), "{1,-2,9223372036854775807}");
  EXPECT_EQ(*TextArray({"a", "b,c", "q\"uote", "back\\slash", "NULL", ""}),
            "{\"a\",\"b,c\",\"q\\\"uote\",\"back\\\\slash\",\"NULL\",\"\"}");
}

}  // namespace
}  // namespace ferry::tracker::postgres
