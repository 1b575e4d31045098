#include "tracker/wire/mlflow_wire.h"

#include <cmath>
#include <utility>

#include "base/json_text.h"

namespace ferry::tracker::wire {

using nlohmann::json;

namespace {

// mlflow/exceptions.py, ERROR_CODE_TO_HTTP_STATUS.
constexpr std::pair<std::string_view, int> kHttpStatus[] = {
    {"INTERNAL_ERROR", 500},
    {"INVALID_STATE", 500},
    {"DATA_LOSS", 500},
    {"NOT_IMPLEMENTED", 501},
    {"TEMPORARILY_UNAVAILABLE", 503},
    {"DEADLINE_EXCEEDED", 504},
    {"REQUEST_LIMIT_EXCEEDED", 429},
    {"CANCELLED", 499},
    {"RESOURCE_EXHAUSTED", 429},
    {"ABORTED", 409},
    {"RESOURCE_CONFLICT", 409},
    {"ALREADY_EXISTS", 409},
    {"NOT_FOUND", 404},
    {"ENDPOINT_NOT_FOUND", 404},
    {"RESOURCE_DOES_NOT_EXIST", 404},
    {"PERMISSION_DENIED", 403},
    {"CUSTOMER_UNAUTHORIZED", 401},
    {"UNAUTHENTICATED", 401},
    {"BAD_REQUEST", 400},
    {"RESOURCE_ALREADY_EXISTS", 400},
    {"INVALID_PARAMETER_VALUE", 400},
};

std::string Dump(const json& j) { return JsonText(j); }

}  // namespace

int HttpStatusOf(std::string_view error_code) {
  for (const auto& [code, http] : kHttpStatus) {
    if (code == error_code) return http;
  }
  return 500;
}

std::string_view ErrorCodeFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kNotFound:
      return "RESOURCE_DOES_NOT_EXIST";
    case StatusCode::kAlreadyExists:
      return "RESOURCE_ALREADY_EXISTS";
    case StatusCode::kInvalidArgument:
      return std::string_view(status.message()).starts_with(kMalformedBody)
                 ? "BAD_REQUEST"
                 : "INVALID_PARAMETER_VALUE";
    case StatusCode::kFailedPrecondition:
    case StatusCode::kOutOfRange:
      return "INVALID_PARAMETER_VALUE";
    case StatusCode::kUnauthenticated:
      return "UNAUTHENTICATED";
    case StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case StatusCode::kUnavailable:
      return "TEMPORARILY_UNAVAILABLE";
    case StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case StatusCode::kUnimplemented:
      return "NOT_IMPLEMENTED";
    case StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    default:
      return "INTERNAL_ERROR";
  }
}

int HttpStatusFor(const Status& status) {
  if (status.code() == StatusCode::kResourceExhausted) return 507;
  return HttpStatusOf(ErrorCodeFor(status));
}

server::Response Error(int http_status, std::string_view error_code, std::string message) {
  for (char& c : message) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return server::JsonResponse(http_status,
                              Dump(json{{"error_code", error_code}, {"message", message}}));
}

server::Response Error(const Status& status) {
  return Error(HttpStatusFor(status), ErrorCodeFor(status), status.message());
}

server::Response OkJson(const json& body) { return server::JsonResponse(200, Dump(body)); }

server::Response Respond(const Result<json>& result) {
  return result.ok() ? OkJson(*result) : Error(result.status());
}

void SetRepeated(json& obj, std::string_view field, json list) {
  if (!list.empty()) obj[std::string(field)] = std::move(list);
}

json DoubleJson(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

}  // namespace ferry::tracker::wire
