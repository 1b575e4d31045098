#pragma once
// A small client of an MLflow tracking server's REST API (`ferry serve`, or MLflow's own), for
// `ferry run --track`: experiments by name, runs (create, get, update), log-batch, tags, and
// artifacts through the mlflow-artifacts proxy API (docs/semantics/mlflow.md,
// docs/semantics/mlflow-artifacts.md). Knows nothing of the server's code: HTTP and JSON only.
//
// Errors: a transport failure or a 429/5xx answer is kUnavailable (IsRetryable); a 404 is
// kNotFound, RESOURCE_ALREADY_EXISTS is kAlreadyExists, 401/403 kUnauthenticated /
// kPermissionDenied, other 4xx kInvalidArgument. Messages name the call and the server
// (without the token) and carry MLflow's error_code and message.
//
// Thread-safety: safe to share (the HTTP client is); calls do not retry unless they say so.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace ferry::http {
class Client;
}

namespace ferry::tracker::client {

struct ClientOptions {
  std::string url;    // the tracking server, e.g. http://127.0.0.1:8780 (no /api suffix)
  std::string token;  // bearer token (MLFLOW_TRACKING_TOKEN); empty = none. Never logged.
  std::chrono::milliseconds timeout{30000};  // per request
};

struct MetricPoint {
  std::string key;
  double value = 0;
  int64_t timestamp_ms = 0;
  int64_t step = 0;
};

struct RunInfo {
  std::string run_id, experiment_id, run_name, status, artifact_uri;
  int64_t start_time_ms = 0;
};

// MLflow's limit per log-batch call (docs/semantics/mlflow.md, "Logging and limits").
inline constexpr size_t kMaxMetricsPerBatch = 1000;

class MlflowClient final {
 public:
  // Errors: a URL that is not http(s)://.
  static Result<std::unique_ptr<MlflowClient>> Create(ClientOptions options);
  ~MlflowClient();

  const std::string& url() const { return options_.url; }

  // Every call from now on ends by `deadline` (its timeout shortened; one that starts after it
  // fails at once with kUnavailable); nullopt = no deadline. Callable from any thread.
  void SetDeadline(std::optional<std::chrono::steady_clock::time_point> deadline);
  // Aborts the calls in flight (within about a second, kCancelled) and every later one: for an
  // owner that must stop waiting on a hung server.
  void CancelAll() { cancel_ = true; }

  // The id of experiment `name`, created when there is none (a concurrent creation is fine).
  Result<std::string> GetOrCreateExperiment(const std::string& name);
  Result<RunInfo> CreateRun(const std::string& experiment_id, const std::string& run_name,
                            int64_t start_time_ms,
                            const std::vector<std::pair<std::string, std::string>>& tags);
  Result<RunInfo> GetRun(const std::string& run_id);
  // status: RUNNING, FINISHED, FAILED, KILLED; end_time_ms 0 = not set.
  Status UpdateRun(const std::string& run_id, const std::string& status, int64_t end_time_ms);
  Status SetTag(const std::string& run_id, const std::string& key, const std::string& value);
  // Sends `points` in calls of at most kMaxMetricsPerBatch. A call that fails stops there:
  // `*sent` (may be null) says how many points the server acknowledged, so a caller can resend
  // the rest (resending a point is harmless: the server drops points equal in key, value,
  // timestamp and step).
  Status LogMetrics(const std::string& run_id, const std::vector<MetricPoint>& points,
                    size_t* sent = nullptr);
  // Logs params (name, value) in calls of at most 100; a param already logged with the same
  // value is accepted by the server, another value is kInvalidArgument.
  Status LogParams(const std::string& run_id,
                   const std::vector<std::pair<std::string, std::string>>& params);
  // Uploads `data` as artifact `path` (relative, e.g. "ferry/output.log") of the run whose
  // artifact_uri is `artifact_uri` (mlflow-artifacts:/...), with x-ferry-sha256 so the server
  // verifies it. Errors: an artifact_uri not served by the tracking server.
  Status UploadArtifact(const std::string& artifact_uri, const std::string& path,
                        std::string_view data);

 private:
  explicit MlflowClient(ClientOptions options);
  // POST/GET `api` (e.g. "runs/create") under /api/2.0/mlflow/; the parsed JSON text.
  Result<std::string> Call(const char* method, const std::string& api, const std::string& body);

  // The http request's timeout under the deadline; kUnavailable naming `what` when it passed.
  Result<std::chrono::milliseconds> TimeLeft(const std::string& what) const;

  ClientOptions options_;
  std::atomic<int64_t> deadline_ns_{0};  // steady_clock nanoseconds; 0 = none
  std::atomic<bool> cancel_{false};
  std::unique_ptr<http::Client> http_;
};

// Where an artifact_uri's files are, relative to the mlflow-artifacts root:
// "mlflow-artifacts:/1/abc/artifacts" and "mlflow-artifacts://host/1/abc/artifacts" give
// "1/abc/artifacts". Errors: any other scheme.
Result<std::string> ArtifactRoot(const std::string& artifact_uri);

// The Status of an MLflow error answer to `what` (`http_status`, the body as sent).
Status MlflowAnswerError(const std::string& what, long http_status, std::string_view body);

}  // namespace ferry::tracker::client
