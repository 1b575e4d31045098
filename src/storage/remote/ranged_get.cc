#include "storage/remote/ranged_get.h"

#include "base/log.h"
#include "base/strings.h"
#include "base/time_format.h"

namespace ferry::storage::remote {

namespace {

bool IsWeak(std::string_view etag) { return etag.starts_with("W/"); }

// "bytes A-B/TOTAL": A, and TOTAL where it is a number.
struct ContentRange {
  std::optional<uint64_t> first, total;
};
ContentRange ParseContentRange(std::string_view v) {
  ContentRange out;
  if (v.starts_with("bytes ")) v.remove_prefix(6);
  size_t dash = v.find('-'), slash = v.find('/');
  if (dash != std::string_view::npos) out.first = ParseUint64(v.substr(0, dash));
  if (slash != std::string_view::npos) out.total = ParseUint64(v.substr(slash + 1));
  return out;
}

}  // namespace

std::string EtagFromHeader(std::string_view value) {
  if (!IsWeak(value) && value.size() >= 2 && value.front() == '"' && value.back() == '"') {
    value = value.substr(1, value.size() - 2);
  }
  return std::string(value);
}

ObjectInfo InfoFromHeaders(std::string key, const http::Response& r) {
  ObjectInfo info{.key = std::move(key)};
  if (auto len = r.Header("content-length")) info.size = ParseUint64(*len).value_or(0);
  if (auto etag = r.Header("etag")) info.etag = EtagFromHeader(*etag);
  if (auto lm = r.Header("last-modified")) {
    if (auto t = ParseHttpDate(*lm)) info.modified = *t;
  }
  return info;
}

void LogRetry(ThrottleReporter& reporter, std::chrono::milliseconds throttle_budget,
              std::string_view op, const Status& why, std::chrono::milliseconds delay,
              std::string_view resume) {
  Log(LogLevel::kInfo, "retrying {}{}in {} ms: {}", op, op.empty() ? "" : " ", delay.count(),
      why.message());
  if (why.detail().stalled) {
    Log(LogLevel::kWarn, "{}; retrying {}", why.message(), resume);
  } else if (IsThrottled(why)) {
    if (auto line = reporter.Note(why, throttle_budget, std::chrono::steady_clock::now())) {
      Log(LogLevel::kWarn, "{}", *line);
    }
  }
}

Status ReadRanged(const RangedGet& get, const ReadOptions& options, const ByteSink& sink) {
  const uint64_t start = options.range ? options.range->offset : 0;
  std::optional<uint64_t> end;  // exclusive
  if (options.range && options.range->length) {
    if (*options.range->length == 0) return Status();
    end = start + *options.range->length;
  }
  uint64_t delivered = 0;
  // The version every attempt is pinned to: the caller's, else the first answer's.
  std::string pinned = options.if_match;
  auto replaced = [&] {
    return Status(StatusCode::kFailedPrecondition,
                  get.op + " '" + get.url + "': object was replaced while reading");
  };
  auto once = [&]() -> Status {
    const uint64_t from = start + delivered;
    http::Headers headers;
    if (from > 0 || end) headers.push_back({"Range", http::RangeHeaderValue(from, end)});
    const bool pinned_by_us = options.if_match.empty() && !pinned.empty() && !IsWeak(pinned);
    if (!pinned.empty() && !IsWeak(pinned)) headers.push_back({"If-Match", "\"" + pinned + "\""});
    uint64_t skip = 0;
    auto on_start = [&](const http::Response& r) -> Status {
      std::string etag;
      if (auto e = r.Header("etag")) etag = EtagFromHeader(*e);
      if (!pinned.empty() && !etag.empty() && etag != pinned) {
        return options.if_match.empty()
                   ? replaced()
                   : Status(StatusCode::kFailedPrecondition,
                            get.op + " '" + get.url + "': object changed (ETag " + etag +
                                ", expected " + options.if_match + ")");
      }
      if (pinned.empty()) pinned = etag;
      ContentRange cr;
      if (auto v = r.Header("content-range")) cr = ParseContentRange(*v);
      if (r.status == 200) {
        skip = from;  // the server ignored Range: skip what is not wanted
      } else if (cr.first && *cr.first != from) {
        return Status(StatusCode::kInternal, get.op + " '" + get.url + "': asked for bytes from " +
                                                 std::to_string(from) + ", answered from " +
                                                 std::to_string(*cr.first));
      }
      if (options.info && delivered == 0) {
        *options.info = InfoFromHeaders(get.key, r);
        if (r.status != 200) {
          // A ranged answer's Content-Length is the range; the size follows the '/'.
          options.info->size = cr.total.value_or(options.info->size);
        }
        if (get.more_info) get.more_info(r, *options.info);
      }
      return Status();
    };
    auto body = [&](std::string_view chunk) -> Status {
      if (skip > 0) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(skip, chunk.size()));
        chunk.remove_prefix(n);
        skip -= n;
      }
      uint64_t pos = start + delivered;
      if (end && pos + chunk.size() > *end) {
        chunk = chunk.substr(0, static_cast<size_t>(*end - std::min(pos, *end)));
      }
      if (chunk.empty()) return Status();
      FERRY_RETURN_IF_ERROR(sink(chunk));
      delivered += chunk.size();
      return Status();
    };
    auto resp = get.attempt(headers, body, on_start);
    if (resp.ok()) return Status();
    const Status& s = resp.status();
    if (s.code() == StatusCode::kOutOfRange && delivered == 0 && get.current_size) {
      // 416: an offset equal to the size is an empty read; beyond it is an error.
      auto size = get.current_size();
      if (size.ok() && *size == from) return Status();
    }
    if (pinned_by_us && s.detail().http_status == 412) {
      return replaced();  // the If-Match we added (the first answer's ETag) failed
    }
    return s;
  };
  RetryHooks hooks;
  if (get.on_retry) {
    hooks.on_retry = [&](int, const Status& why, std::chrono::milliseconds delay) {
      get.on_retry(why, delay, "from byte " + std::to_string(start + delivered));
    };
  }
  return RunWithRetry(get.retry, once, hooks);
}

}  // namespace ferry::storage::remote
