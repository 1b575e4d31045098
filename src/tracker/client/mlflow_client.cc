#include "tracker/client/mlflow_client.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

#include "base/hash.h"
#include "base/json_text.h"
#include "base/strings.h"
#include "http/http_client.h"

namespace ferry::tracker::client {

namespace {

using nlohmann::json;

constexpr char kApi[] = "/api/2.0/mlflow/";
constexpr char kArtifactsApi[] = "/api/2.0/mlflow-artifacts/artifacts/";

RunInfo ParseRunInfo(const json& run) {
  const json& info = run.at("info");
  RunInfo r;
  r.run_id = info.value("run_id", info.value("run_uuid", ""));
  r.experiment_id = info.value("experiment_id", "");
  r.run_name = info.value("run_name", "");
  r.status = info.value("status", "");
  r.artifact_uri = info.value("artifact_uri", "");
  if (info.contains("start_time")) {
    const json& t = info["start_time"];
    r.start_time_ms = t.is_string() ? std::stoll(t.get<std::string>()) : t.get<int64_t>();
  }
  return r;
}

Result<json> ParseJson(const std::string& text, const std::string& what) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) {
    return Status(StatusCode::kInternal, what + ": the answer is not a JSON object");
  }
  return j;
}

}  // namespace

Status MlflowAnswerError(const std::string& what, long http_status, std::string_view body) {
  std::string code, message;
  json j = json::parse(body, nullptr, false);
  if (j.is_object()) {
    code = j.value("error_code", "");
    message = j.value("message", "");
  }
  std::string text = what + ": HTTP " + std::to_string(http_status);
  if (!code.empty()) text += " " + code;
  if (!message.empty()) text += ": " + message.substr(0, message.find('\n'));
  StatusCode sc = StatusCode::kInvalidArgument;
  if (http_status == 404 || code == "RESOURCE_DOES_NOT_EXIST") sc = StatusCode::kNotFound;
  if (code == "RESOURCE_ALREADY_EXISTS") sc = StatusCode::kAlreadyExists;
  if (http_status == 401) sc = StatusCode::kUnauthenticated;
  if (http_status == 403) sc = StatusCode::kPermissionDenied;
  if (http_status == 429 || http_status >= 500) sc = StatusCode::kUnavailable;
  return Status(sc, std::move(text),
                ErrorDetail{.http_status = static_cast<int>(http_status), .remote_code = code});
}

Result<std::string> ArtifactRoot(const std::string& artifact_uri) {
  constexpr std::string_view kScheme = "mlflow-artifacts:";
  if (!StartsWith(artifact_uri, kScheme)) {
    return InvalidArgument("artifact_uri '" + artifact_uri +
                           "' is not served by the tracking server (mlflow-artifacts:/...)");
  }
  std::string path = artifact_uri.substr(kScheme.size());
  if (StartsWith(path, "//")) {  // mlflow-artifacts://host/path
    size_t slash = path.find('/', 2);
    path = slash == std::string::npos ? "" : path.substr(slash);
  }
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  while (!path.empty() && path.back() == '/') path.pop_back();
  return path;
}

Result<std::unique_ptr<MlflowClient>> MlflowClient::Create(ClientOptions options) {
  if (!StartsWith(options.url, "http://") && !StartsWith(options.url, "https://")) {
    return InvalidArgument("tracking URL '" + http::DisplayUrl(options.url) +
                           "' must start with http:// or https://");
  }
  while (!options.url.empty() && options.url.back() == '/') options.url.pop_back();
  return std::unique_ptr<MlflowClient>(new MlflowClient(std::move(options)));
}

MlflowClient::MlflowClient(ClientOptions options) : options_(std::move(options)) {
  http::ClientOptions ho;
  ho.connect_timeout = std::chrono::milliseconds(5000);
  ho.total_timeout = options_.timeout;
  ho.cancel = &cancel_;
  http_ = std::make_unique<http::Client>(ho);
}

MlflowClient::~MlflowClient() = default;

void MlflowClient::SetDeadline(std::optional<std::chrono::steady_clock::time_point> deadline) {
  deadline_ns_ = deadline ? std::max<int64_t>(1, deadline->time_since_epoch().count()) : 0;
}

Result<std::chrono::milliseconds> MlflowClient::TimeLeft(const std::string& what) const {
  const int64_t ns = deadline_ns_;
  if (ns == 0) return std::chrono::milliseconds(0);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(ns)) -
      std::chrono::steady_clock::now());
  if (left.count() <= 0) return Status(StatusCode::kUnavailable, what + ": no time left for it");
  return left;
}

Result<std::string> MlflowClient::Call(const char* method, const std::string& api,
                                       const std::string& body) {
  const bool get = std::string_view(method) == "GET";
  http::Request req;
  req.method = method;
  req.url = options_.url + kApi + api;
  if (get && !body.empty()) req.url += "?" + body;
  if (!get) {
    req.body = body;
    req.send_body = true;
    req.headers.push_back({"Content-Type", "application/json"});
  }
  if (!options_.token.empty()) req.headers.push_back({"Authorization", "Bearer " + options_.token});
  const std::string what =
      std::string("MLflow ") + method + " " + api + " at " + http::DisplayUrl(options_.url);
  FERRY_ASSIGN_OR_RETURN(req.timeout, TimeLeft(what));
  auto resp = http_->Send(req);
  if (!resp.ok()) return resp.status().WithContext(what);
  if (!resp->ok()) return MlflowAnswerError(what, resp->status, resp->body);
  return std::move(resp->body);
}

Result<std::string> MlflowClient::GetOrCreateExperiment(const std::string& name) {
  for (int round = 0; round < 2; ++round) {
    auto got = Call("GET", "experiments/get-by-name", "experiment_name=" + PercentEncode(name));
    if (got.ok()) {
      FERRY_ASSIGN_OR_RETURN(json j, ParseJson(*got, "experiments/get-by-name"));
      return j.at("experiment").value("experiment_id", "");
    }
    if (got.status().code() != StatusCode::kNotFound) return got.status();
    auto made = Call("POST", "experiments/create", JsonText(json{{"name", name}}));
    if (made.ok()) {
      FERRY_ASSIGN_OR_RETURN(json j, ParseJson(*made, "experiments/create"));
      return j.value("experiment_id", "");
    }
    // Created by someone else meanwhile: look it up again.
    if (made.status().code() != StatusCode::kAlreadyExists) return made.status();
  }
  return Status(StatusCode::kInternal, "experiment '" + name + "' neither found nor created");
}

Result<RunInfo> MlflowClient::CreateRun(
    const std::string& experiment_id, const std::string& run_name, int64_t start_time_ms,
    const std::vector<std::pair<std::string, std::string>>& tags) {
  json t = json::array();
  for (const auto& [k, v] : tags) t.push_back({{"key", k}, {"value", v}});
  json body = {{"experiment_id", experiment_id}, {"start_time", start_time_ms}, {"tags", t}};
  if (!run_name.empty()) body["run_name"] = run_name;
  FERRY_ASSIGN_OR_RETURN(std::string text, Call("POST", "runs/create", JsonText(body)));
  FERRY_ASSIGN_OR_RETURN(json j, ParseJson(text, "runs/create"));
  try {
    return ParseRunInfo(j.at("run"));
  } catch (const json::exception& e) {
    return Status(StatusCode::kInternal,
                  std::string("runs/create: unexpected answer: ") + e.what());
  }
}

Result<RunInfo> MlflowClient::GetRun(const std::string& run_id) {
  FERRY_ASSIGN_OR_RETURN(std::string text,
                         Call("GET", "runs/get", "run_id=" + PercentEncode(run_id)));
  FERRY_ASSIGN_OR_RETURN(json j, ParseJson(text, "runs/get"));
  try {
    return ParseRunInfo(j.at("run"));
  } catch (const json::exception& e) {
    return Status(StatusCode::kInternal, std::string("runs/get: unexpected answer: ") + e.what());
  }
}

Status MlflowClient::UpdateRun(const std::string& run_id, const std::string& status,
                               int64_t end_time_ms) {
  json body = {{"run_id", run_id}, {"status", status}};
  if (end_time_ms > 0) body["end_time"] = end_time_ms;
  return Call("POST", "runs/update", JsonText(body)).status();
}

Status MlflowClient::SetTag(const std::string& run_id, const std::string& key,
                            const std::string& value) {
  return Call("POST", "runs/set-tag",
              JsonText(json{{"run_id", run_id}, {"key", key}, {"value", value}}))
      .status();
}

Status MlflowClient::LogMetrics(const std::string& run_id, const std::vector<MetricPoint>& points,
                                size_t* sent) {
  size_t done = 0;
  if (sent) *sent = 0;
  while (done < points.size()) {
    const size_t n = std::min(kMaxMetricsPerBatch, points.size() - done);
    json metrics = json::array();
    for (size_t i = done; i < done + n; ++i) {
      const MetricPoint& p = points[i];
      // JSON has no NaN or infinities: MLflow takes them as strings.
      json value = std::isnan(p.value)   ? json("NaN")
                   : std::isinf(p.value) ? json(p.value > 0 ? "Infinity" : "-Infinity")
                                         : json(p.value);
      metrics.push_back(
          {{"key", p.key}, {"value", value}, {"timestamp", p.timestamp_ms}, {"step", p.step}});
    }
    FERRY_RETURN_IF_ERROR(
        Call("POST", "runs/log-batch", JsonText(json{{"run_id", run_id}, {"metrics", metrics}}))
            .status());
    done += n;
    if (sent) *sent = done;
  }
  return Status();
}

Status MlflowClient::LogParams(const std::string& run_id,
                               const std::vector<std::pair<std::string, std::string>>& params) {
  constexpr size_t kMaxParamsPerBatch = 100;  // MLflow's limit per log-batch
  for (size_t done = 0; done < params.size(); done += kMaxParamsPerBatch) {
    json list = json::array();
    for (size_t i = done; i < std::min(params.size(), done + kMaxParamsPerBatch); ++i) {
      list.push_back({{"key", params[i].first}, {"value", params[i].second}});
    }
    FERRY_RETURN_IF_ERROR(
        Call("POST", "runs/log-batch", JsonText(json{{"run_id", run_id}, {"params", list}}))
            .status());
  }
  return Status();
}

Status MlflowClient::UploadArtifact(const std::string& artifact_uri, const std::string& path,
                                    std::string_view data) {
  FERRY_ASSIGN_OR_RETURN(std::string root, ArtifactRoot(artifact_uri));
  http::Request req;
  req.method = "PUT";
  req.url = options_.url + kArtifactsApi + PercentEncode(root + "/" + path, /*keep_slash=*/true);
  req.body = data;
  req.send_body = true;
  req.data_transfer = true;
  req.headers.push_back({"x-ferry-sha256", Sha256Hex(data)});
  req.headers.push_back({"Content-Type", "application/octet-stream"});
  if (!options_.token.empty()) req.headers.push_back({"Authorization", "Bearer " + options_.token});
  const std::string what = "upload of artifact '" + path + "' to " + http::DisplayUrl(options_.url);
  FERRY_ASSIGN_OR_RETURN(req.timeout, TimeLeft(what));
  auto resp = http_->Send(req);
  if (!resp.ok()) return resp.status().WithContext(what);
  if (!resp->ok()) return MlflowAnswerError(what, resp->status, resp->body);
  return Status();
}

}  // namespace ferry::tracker::client
