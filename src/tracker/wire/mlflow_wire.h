#pragma once
// MLflow's wire, the one place both MLflow APIs of `ferry serve` (tracker/mlflow: tracking and
// the registry; tracker/artifacts: the artifact proxy) take it from: how errors are written
// ({"error_code", "message"} on one line), which HTTP status each error code has (MLflow's
// mlflow/exceptions.py table), which code each Status becomes, and JSON bodies
// (docs/semantics/mlflow.md, "Errors").

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/http_types.h"

namespace ferry::tracker::wire {

// A message prefix that makes kInvalidArgument BAD_REQUEST (the body is not JSON at all)
// instead of INVALID_PARAMETER_VALUE.
inline constexpr std::string_view kMalformedBody = "malformed JSON body";

// MLflow's HTTP status for `error_code` (mlflow/exceptions.py ERROR_CODE_TO_HTTP_STATUS);
// 500 for a code it does not list.
int HttpStatusOf(std::string_view error_code);

// The MLflow error code for a Status:
//   kNotFound RESOURCE_DOES_NOT_EXIST (404), kAlreadyExists RESOURCE_ALREADY_EXISTS (400),
//   kInvalidArgument INVALID_PARAMETER_VALUE (400; BAD_REQUEST for kMalformedBody),
//   kFailedPrecondition and kOutOfRange INVALID_PARAMETER_VALUE (400: a deleted run, a part
//   missing, a range past the end, as MLflow answers a request that cannot apply),
//   kUnauthenticated UNAUTHENTICATED (401), kPermissionDenied PERMISSION_DENIED (403),
//   kUnavailable TEMPORARILY_UNAVAILABLE (503), kDeadlineExceeded DEADLINE_EXCEEDED (504),
//   kUnimplemented NOT_IMPLEMENTED (501), kResourceExhausted RESOURCE_EXHAUSTED (see below),
//   anything else INTERNAL_ERROR (500).
std::string_view ErrorCodeFor(const Status& status);

// The HTTP status of ErrorCodeFor(status), with one deliberate difference from MLflow's table:
// kResourceExhausted (the disk or the database is full) is 507, not 429: MLflow clients retry a
// 429 for minutes, and a full disk does not empty itself; 507 fails the call at once with the
// message.
int HttpStatusFor(const Status& status);

// {"error_code": code, "message": message} with `http_status`; the message is made one line.
server::Response Error(int http_status, std::string_view error_code, std::string message);
// Error(HttpStatusFor(s), ErrorCodeFor(s), s.message()).
server::Response Error(const Status& status);

// 200 with `body` as compact JSON (invalid UTF-8 replaced, never thrown on).
server::Response OkJson(const nlohmann::json& body);
// OkJson(*result), or Error(result.status()).
server::Response Respond(const Result<nlohmann::json>& result);

// int64 fields as MLflow's server writes them: JSON numbers (message_to_json; protobuf's own
// JSON mapping would write strings; requests may send either).
inline nlohmann::json Int64Json(int64_t v) { return v; }
// obj[field] = list, unless the list is empty: MLflow's message_to_json omits empty repeated
// fields (a run without tags has no "tags", a search without results answers {}).
void SetRepeated(nlohmann::json& obj, std::string_view field, nlohmann::json list);
// Doubles, non-finite ones as "NaN", "Infinity", "-Infinity".
nlohmann::json DoubleJson(double v);

}  // namespace ferry::tracker::wire
