#include "tracker/wire/mlflow_wire.h"

#include <gtest/gtest.h>

namespace ferry::tracker::wire {
namespace {

nlohmann::json BodyOf(const server::Response& r) { return nlohmann::json::parse(r.body); }

// Each Status answers as MLflow's server answers the code it becomes (mlflow/exceptions.py),
// whichever API (tracking or artifacts) answers it.
TEST(MlflowWireTest, EachStatusHasMlflowsCodeAndHttpStatus) {
  struct Case {
    Status status;
    int http;
    const char* code;
  } cases[] = {
      {NotFound("x"), 404, "RESOURCE_DOES_NOT_EXIST"},
      {Status(StatusCode::kAlreadyExists, "x"), 400, "RESOURCE_ALREADY_EXISTS"},
      {InvalidArgument("x"), 400, "INVALID_PARAMETER_VALUE"},
      {InvalidArgument(std::string(kMalformedBody) + ": syntax"), 400, "BAD_REQUEST"},
      {Status(StatusCode::kFailedPrecondition, "x"), 400, "INVALID_PARAMETER_VALUE"},
      {Status(StatusCode::kOutOfRange, "x"), 400, "INVALID_PARAMETER_VALUE"},
      {Status(StatusCode::kUnauthenticated, "x"), 401, "UNAUTHENTICATED"},
      {Status(StatusCode::kPermissionDenied, "x"), 403, "PERMISSION_DENIED"},
      {Unavailable("x"), 503, "TEMPORARILY_UNAVAILABLE"},
      {Status(StatusCode::kDeadlineExceeded, "x"), 504, "DEADLINE_EXCEEDED"},
      {Status(StatusCode::kUnimplemented, "x"), 501, "NOT_IMPLEMENTED"},
      {Status(StatusCode::kResourceExhausted, "disk full"), 507, "RESOURCE_EXHAUSTED"},
      {Internal("x"), 500, "INTERNAL_ERROR"},
      {Status(StatusCode::kDataLoss, "x"), 500, "INTERNAL_ERROR"},
  };
  for (const Case& c : cases) {
    server::Response r = Error(c.status);
    EXPECT_EQ(r.status, c.http) << c.code;
    EXPECT_EQ(BodyOf(r)["error_code"], c.code);
    EXPECT_EQ(BodyOf(r)["message"], c.status.message());
    if (c.status.code() != StatusCode::kResourceExhausted) {
      EXPECT_EQ(HttpStatusOf(c.code), c.http) << c.code;  // MLflow's own table agrees
    }
  }
  EXPECT_EQ(HttpStatusOf("ENDPOINT_NOT_FOUND"), 404);
  EXPECT_EQ(HttpStatusOf("SOMETHING_NEW"), 500);
}

TEST(MlflowWireTest, MessagesAreOneLineAndBodiesNeverThrowOnBadUtf8) {
  server::Response r = Error(InvalidArgument("a\nb\rc"));
  EXPECT_EQ(BodyOf(r)["message"], "a b c");
  std::string line = r.body;
  if (line.ends_with('\n')) line.pop_back();
  EXPECT_EQ(line.find_first_of("\r\n"), std::string::npos);
  server::Response ok = OkJson({{"name", std::string("bad \xff byte")}});
  EXPECT_EQ(ok.status, 200);
  EXPECT_NE(ok.body.find("bad"), std::string::npos);
}

TEST(MlflowWireTest, NumbersAreJsonNumbersAndNonFiniteDoublesNames) {
  EXPECT_TRUE(Int64Json(1700000000000).is_number_integer());
  EXPECT_EQ(DoubleJson(std::nan("")), "NaN");
  EXPECT_EQ(DoubleJson(1.0 / 0.0), "Infinity");
  EXPECT_EQ(DoubleJson(-1.0 / 0.0), "-Infinity");
  EXPECT_EQ(DoubleJson(0.5), 0.5);
}

}  // namespace
}  // namespace ferry::tracker::wire
