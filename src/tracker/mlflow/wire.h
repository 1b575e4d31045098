#pragma once
// MLflow's wire format (docs/semantics/mlflow.md, "Answers" and "Errors"): the model as JSON,
// int64 fields as strings (protobuf's JSON mapping), non-finite doubles as "NaN", "Infinity",
// "-Infinity", enums by name; errors as {"error_code", "message"} with MLflow's HTTP statuses.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "server/http_types.h"
#include "tracker/model.h"

namespace ferry::tracker::mlflow {

nlohmann::json Int64Json(int64_t v);
nlohmann::json DoubleJson(double v);
nlohmann::json TagsJson(const std::vector<Tag>& tags);
nlohmann::json ExperimentJson(const Experiment& e);
nlohmann::json RunInfoJson(const RunInfo& info);
nlohmann::json RunJson(const Run& run);
nlohmann::json MetricJson(const MetricPoint& m);
nlohmann::json SampledPointJson(const SampledPoint& p);

// 200 with the JSON body.
server::Response OkJson(const nlohmann::json& body);
// OkJson(*result), or MlflowError(result.status()).
server::Response Respond(const Result<nlohmann::json>& result);
// {"error_code": code, "message": message} with `http_status`; the message is one line.
server::Response MlflowError(int http_status, std::string_view error_code, std::string message);
// The MLflow error for a Status: kNotFound 404 RESOURCE_DOES_NOT_EXIST, kAlreadyExists 400
// RESOURCE_ALREADY_EXISTS, kInvalidArgument 400 INVALID_PARAMETER_VALUE (BAD_REQUEST for an
// unparseable body), kFailedPrecondition (a deleted run) 400 INVALID_PARAMETER_VALUE, kUnavailable
// 503 TEMPORARILY_UNAVAILABLE, kResourceExhausted 429 REQUEST_LIMIT_EXCEEDED, kUnimplemented 501
// NOT_IMPLEMENTED, anything else 500 INTERNAL_ERROR.
server::Response MlflowError(const Status& status);

}  // namespace ferry::tracker::mlflow
