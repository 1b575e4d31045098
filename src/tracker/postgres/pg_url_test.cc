#include "tracker/postgres/pg_url.h"

#include <gtest/gtest.h>

namespace ferry::tracker::postgres {
namespace {

TEST(PostgresUrlTest, RecognisesBothSchemes) {
  EXPECT_TRUE(IsPostgresUrl("postgresql://h/db"));
  EXPECT_TRUE(IsPostgresUrl("postgres://h/db"));
  EXPECT_FALSE(IsPostgresUrl("/var/lib/tracker.db"));
  EXPECT_FALSE(IsPostgresUrl("mysql://h/db"));
}

TEST(PostgresUrlTest, HidesThePasswordOfTheUserInfo) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://ann:s3cr%40t@db.example:5433/ferry"),
            "postgresql://ann:[REDACTED]@db.example:5433/ferry");
  EXPECT_EQ(PostgresUrlPassword("postgresql://ann:s3cr%40t@db.example:5433/ferry"), "s3cr%40t");
}

TEST(PostgresUrlTest, HidesAPasswordParameter) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://ann@h/db?sslmode=require&password=pw1234567"),
            "postgresql://ann@h/db?sslmode=require&password=[REDACTED]");
  EXPECT_EQ(PostgresUrlPassword("postgresql://ann@h/db?password=pw1234567&x=1"), "pw1234567");
}

TEST(PostgresUrlTest, LeavesAUrlWithoutPasswordAlone) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://ann@127.0.0.1:5432/db"),
            "postgresql://ann@127.0.0.1:5432/db");
  EXPECT_EQ(RedactPostgresUrl("postgres://h"), "postgres://h");
  EXPECT_EQ(PostgresUrlPassword("postgres://h:5432/db"), "");
}

TEST(PostgresUrlTest, AnAtSignInThePathIsNotUserInfo) {
  EXPECT_EQ(RedactPostgresUrl("postgresql://h/db?application_name=a@b"),
            "postgresql://h/db?application_name=a@b");
}

}  // namespace
}  // namespace ferry::tracker::postgres
