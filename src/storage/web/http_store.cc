#include "storage/web/http_store.h"

#include "http/http_client.h"
#include "storage/remote/ranged_get.h"

namespace ferry::storage {

namespace {

Status HttpStatusToStatus(const std::string& op, const std::string& url,
                          const http::Response& resp) {
  long st = resp.status;
  std::string msg = op + " '" + url + "' failed: HTTP " + std::to_string(st);
  ErrorDetail d{.http_status = static_cast<int>(st)};
  if (st == 429 || st == 503) {  // Too Many Requests, Service Unavailable: slow down
    d.throttled = true;
    d.retry_after = http::RetryAfter(resp).value_or(std::chrono::milliseconds(0));
  }
  if (st == 404 || st == 410) return Status(StatusCode::kNotFound, msg, d);
  if (st == 401) return Status(StatusCode::kUnauthenticated, msg, d);
  if (st == 403) return Status(StatusCode::kPermissionDenied, msg, d);
  if (st == 412) return Status(StatusCode::kFailedPrecondition, msg + " (resource changed)", d);
  if (st == 416) return Status(StatusCode::kOutOfRange, msg, d);
  if (st == 429 || st >= 500) return Status(StatusCode::kUnavailable, msg, d);
  return Status(StatusCode::kInvalidArgument, msg, d);
}

class HttpStore final : public Store {
 public:
  explicit HttpStore(HttpStoreOptions o) : opt_(std::move(o)) {}

  std::string UrlFor(std::string_view key) const override {
    return http::DisplayUrl(opt_.origin + "/" + std::string(key));
  }
  Capabilities capabilities() const override { return {.writable = false, .listable = false}; }
  StoreDescription Describe() override {
    return {.kind = opt_.origin.substr(0, opt_.origin.find(':')),
            .endpoint = http::DisplayUrl(opt_.origin)};
  }

  Result<ObjectInfo> Stat(std::string_view key) override {
    Result<http::Response> resp = Internal("not sent");
    Status s = RunWithRetry(
        opt_.retry,
        [&]() -> Status {
          resp = opt_.http->Send({.method = "HEAD", .url = Url(key)});
          if (!resp.ok()) return resp.status().WithContext("HEAD '" + UrlFor(key) + "'");
          if (!resp->ok()) return HttpStatusToStatus("HEAD", UrlFor(key), *resp);
          return Status();
        },
        RetryHooks{.on_retry = [&](int, const Status& why, std::chrono::milliseconds d) {
          OnRetry(why, d, "the request");
        }});
    if (!s.ok()) return s;
    return remote::InfoFromHeaders(std::string(key), *resp);
  }

  // The shared resumable GET (storage/remote/ranged_get.h).
  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    remote::RangedGet get{
        .op = "GET",
        .url = UrlFor(key),
        .key = std::string(key),
        .attempt = [&](const http::Headers& headers, const http::BodySink& body,
                       const http::ResponseStart& on_start) -> Result<http::Response> {
          http::Request req{
              .method = "GET", .url = Url(key), .headers = headers, .data_transfer = true};
          auto resp = opt_.http->Send(req, body, on_start);
          if (!resp.ok()) return resp.status().WithContext("GET '" + UrlFor(key) + "'");
          if (!resp->ok()) return HttpStatusToStatus("GET", UrlFor(key), *resp);
          return resp;
        },
        .current_size = [&]() -> Result<uint64_t> {
          FERRY_ASSIGN_OR_RETURN(ObjectInfo info, Stat(key));
          return info.size;
        },
        .retry = opt_.retry,
        .on_retry = [&](const Status& why, std::chrono::milliseconds d,
                        const std::string& resume) { OnRetry(why, d, resume); }};
    return remote::ReadRanged(get, options, sink);
  }

  Result<std::unique_ptr<Writer>> NewWriter(std::string_view key, const WriteOptions&) override {
    return ReadOnly("write", key);
  }
  Result<ListPage> List(const ListOptions& o) override { return ReadOnly("list", o.prefix); }
  Status Delete(std::string_view key) override { return ReadOnly("delete", key); }

 private:
  std::string Url(std::string_view key) const {
    std::string u = opt_.origin + "/" + std::string(key);
    return opt_.query.empty() ? u : u + "?" + opt_.query;
  }
  // Logs retries like the S3 store (remote::LogRetry).
  void OnRetry(const Status& why, std::chrono::milliseconds delay, std::string_view resume) {
    remote::LogRetry(throttle_reporter_, opt_.retry.throttle_budget, "", why, delay, resume);
  }
  Status ReadOnly(std::string_view op, std::string_view key) const {
    return Unimplemented("cannot " + std::string(op) + " '" + UrlFor(key) +
                         "': http(s) URLs are read-only");
  }
  HttpStoreOptions opt_;
  ThrottleReporter throttle_reporter_;
};

}  // namespace

std::shared_ptr<Store> MakeHttpStore(HttpStoreOptions options) {
  return std::make_shared<HttpStore>(std::move(options));
}

}  // namespace ferry::storage
