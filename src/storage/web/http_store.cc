#include "storage/web/http_store.h"

#include "base/log.h"
#include "base/strings.h"
#include "http/http_client.h"

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
        Hooks(nullptr));
    if (!s.ok()) return s;
    ObjectInfo info{.key = std::string(key)};
    if (auto len = resp->Header("content-length")) info.size = ParseUint64(*len).value_or(0);
    if (auto e = resp->Header("etag")) info.etag = std::string(*e);
    if (auto lm = resp->Header("last-modified")) {
      if (auto t = ParseHttpDate(*lm)) info.modified = *t;
    }
    return info;
  }

  // Resumes broken transfers with a Range from the first undelivered byte. A server that ignores
  // Range (answers 200 to a ranged request) has the bytes before the wanted offset skipped.
  Status Read(std::string_view key, const ReadOptions& options, const ByteSink& sink) override {
    uint64_t start = options.range ? options.range->offset : 0;
    std::optional<uint64_t> length;
    if (options.range) length = options.range->length;
    if (length && *length == 0) return Status();
    uint64_t delivered = 0;
    std::string etag = options.if_match;
    RetryHooks hooks = Hooks([&] { return "from byte " + std::to_string(start + delivered); });
    return RunWithRetry(
        opt_.retry,
        [&]() -> Status {
          uint64_t from = start + delivered;
          http::Request req{.method = "GET", .url = Url(key), .data_transfer = true};
          std::optional<uint64_t> want_end;
          if (length) want_end = start + *length;
          if (from > 0 || length)
            req.headers.push_back({"Range", http::RangeHeaderValue(from, want_end)});
          if (!etag.empty()) req.headers.push_back({"If-Match", etag});
          uint64_t skip = 0;
          auto on_start = [&](const http::Response& r) -> Status {
            if (r.status == 200 && from > 0) skip = from;  // Range ignored: skip what we have
            if (options.info && delivered == 0) {
              options.info->key = std::string(key);
              if (auto e = r.Header("etag")) options.info->etag = std::string(*e);
              if (auto cr = r.Header("content-range");
                  cr && cr->find('/') != std::string_view::npos) {
                options.info->size = ParseUint64(cr->substr(cr->find('/') + 1)).value_or(0);
              } else if (auto len = r.Header("content-length")) {
                options.info->size = ParseUint64(*len).value_or(0);
              }
            }
            return Status();
          };
          auto resp = opt_.http->Send(
              req,
              [&](std::string_view chunk) -> Status {
                if (skip > 0) {
                  size_t n = static_cast<size_t>(std::min<uint64_t>(skip, chunk.size()));
                  chunk.remove_prefix(n);
                  skip -= n;
                }
                uint64_t pos = start + delivered;
                if (want_end && pos + chunk.size() > *want_end) {
                  chunk = chunk.substr(0, static_cast<size_t>(*want_end - pos));
                }
                if (chunk.empty()) return Status();
                FERRY_RETURN_IF_ERROR(sink(chunk));
                delivered += chunk.size();
                return Status();
              },
              on_start);
          if (!resp.ok()) return resp.status().WithContext("GET '" + UrlFor(key) + "'");
          if (resp->status == 416 && delivered == 0) {
            auto info = Stat(key);
            if (info.ok() && info->size == from) return Status();
          }
          if (!resp->ok()) return HttpStatusToStatus("GET", UrlFor(key), *resp);
          if (etag.empty()) {
            if (auto e = resp->Header("etag")) etag = std::string(*e);
          }
          return Status();
        },
        hooks);
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
  // Logs retries like the S3 store: info for each, a warning for each stall (saying where the
  // retry resumes: `resume()`, or "the request"), a few warnings for throttling.
  RetryHooks Hooks(std::function<std::string()> resume) {
    return RetryHooks{.on_retry = [this, resume = std::move(resume)](int, const Status& why,
                                                                     std::chrono::milliseconds d) {
      Log(LogLevel::kInfo, "retrying in {} ms: {}", d.count(), why.message());
      if (why.detail().stalled) {
        Log(LogLevel::kWarn, "{}; retrying {}", why.message(),
            resume ? resume() : std::string("the request"));
      } else if (IsThrottled(why)) {
        if (auto line = throttle_reporter_.Note(why, opt_.retry.throttle_budget,
                                                std::chrono::steady_clock::now())) {
          Log(LogLevel::kWarn, "{}", *line);
        }
      }
    }};
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
