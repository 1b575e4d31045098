#include "tracker/artifacts/artifact_download.h"

#include <cstring>
#include <deque>
#include <thread>

#include "base/mutex.h"
#include "base/strings.h"

namespace ferry::tracker::artifacts {

namespace {

// Chunks the store's reader may run ahead of the client (each at most what the store's sink
// gets at once, typically 1 MiB or less): enough to keep a disk busy while a chunk is written
// to the socket, small enough for thousands of downloads at once.
constexpr size_t kQueuedChunks = 4;

class StoreBodySource final : public server::BodySource {
 public:
  StoreBodySource(std::shared_ptr<storage::Store> store, std::string key,
                  std::optional<storage::ByteRange> range)
      : store_(std::move(store)), key_(std::move(key)), range_(range) {}
  ~StoreBodySource() override {
    Cancel();
    if (thread_.joinable()) thread_.join();
  }

  Result<size_t> Read(char* buf, size_t n) override {
    if (!thread_.joinable()) thread_ = std::thread([this] { Produce(); });
    MutexLock lock(mu_);
    cv_.Wait(lock, [this]() REQUIRES(mu_) { return !queue_.empty() || done_ || cancelled_; });
    if (cancelled_) return Status(StatusCode::kCancelled, "download cancelled");
    if (queue_.empty()) {
      if (!status_.ok()) return status_;
      return size_t{0};
    }
    std::string& front = queue_.front();
    size_t k = std::min(n, front.size() - offset_);
    std::memcpy(buf, front.data() + offset_, k);
    offset_ += k;
    if (offset_ == front.size()) {
      queue_.pop_front();
      offset_ = 0;
      cv_.NotifyAll();
    }
    return k;
  }

  void Cancel() override {
    MutexLock lock(mu_);
    cancelled_ = true;
    cv_.NotifyAll();
  }

 private:
  void Produce() {
    storage::ReadOptions options;
    options.range = range_;
    Status s = store_->Read(key_, options, [this](std::string_view chunk) -> Status {
      MutexLock lock(mu_);
      cv_.Wait(lock,
               [this]() REQUIRES(mu_) { return queue_.size() < kQueuedChunks || cancelled_; });
      if (cancelled_) return Status(StatusCode::kCancelled, "download cancelled");
      queue_.emplace_back(chunk);
      cv_.NotifyAll();
      return Status();
    });
    MutexLock lock(mu_);
    done_ = true;
    status_ = s;
    cv_.NotifyAll();
  }

  std::shared_ptr<storage::Store> store_;
  std::string key_;
  std::optional<storage::ByteRange> range_;
  std::thread thread_;
  Mutex mu_;
  CondVar cv_;
  std::deque<std::string> queue_ GUARDED_BY(mu_);
  size_t offset_ GUARDED_BY(mu_) = 0;
  bool done_ GUARDED_BY(mu_) = false;
  bool cancelled_ GUARDED_BY(mu_) = false;
  Status status_ GUARDED_BY(mu_);
};

// Artifacts are whatever a client uploaded: never a type a browser renders as a document with
// script (HTML, SVG, XML are text or bytes here), always an attachment, so a browser sent to
// one downloads it; the server's sandboxing CSP and nosniff come on top (browser_policy.h).
std::string ContentTypeFor(std::string_view key) {
  auto ends = [&](std::string_view s) { return EndsWith(ToLower(key), s); };
  if (ends(".json")) return "application/json";
  if (ends(".txt") || ends(".log") || ends(".yaml") || ends(".yml") || ends(".md") ||
      ends("mlmodel") || ends(".html") || ends(".htm") || ends(".csv")) {
    return "text/plain; charset=utf-8";
  }
  if (ends(".png")) return "image/png";
  if (ends(".jpg") || ends(".jpeg")) return "image/jpeg";
  if (ends(".gif")) return "image/gif";
  if (ends(".webp")) return "image/webp";
  return "application/octet-stream";
}

// Content-Disposition: attachment with the file's name (RFC 6266, RFC 8187 for any bytes).
std::string AttachmentFor(std::string_view key) {
  std::string_view name = key.substr(key.rfind('/') + 1);
  return "attachment; filename*=UTF-8''" + PercentEncode(name);
}

}  // namespace

std::optional<ByteSpan> ParseRangeHeader(std::optional<std::string_view> header, uint64_t size,
                                         bool* unsatisfiable) {
  *unsatisfiable = false;
  if (!header) return std::nullopt;
  std::string_view h = Trim(*header);
  if (!StartsWith(h, "bytes=")) return std::nullopt;
  h.remove_prefix(6);
  if (h.find(',') != std::string_view::npos) return std::nullopt;  // several: the whole object
  size_t dash = h.find('-');
  if (dash == std::string_view::npos) return std::nullopt;
  std::string_view a = Trim(h.substr(0, dash)), b = Trim(h.substr(dash + 1));
  if (a.empty()) {  // the last N bytes
    auto n = ParseUint64(b);
    if (!n) return std::nullopt;
    if (*n == 0 || size == 0) {
      *unsatisfiable = true;
      return std::nullopt;
    }
    uint64_t k = std::min(*n, size);
    return ByteSpan{size - k, size - 1};
  }
  auto first = ParseUint64(a);
  if (!first) return std::nullopt;
  std::optional<uint64_t> last;
  if (!b.empty()) {
    last = ParseUint64(b);
    if (!last || *last < *first) return std::nullopt;
  }
  if (*first >= size) {
    *unsatisfiable = true;
    return std::nullopt;
  }
  return ByteSpan{*first, std::min(last.value_or(size - 1), size - 1)};
}

std::unique_ptr<server::BodySource> StoreBody(std::shared_ptr<storage::Store> store,
                                              std::string key,
                                              std::optional<storage::ByteRange> range) {
  return std::make_unique<StoreBodySource>(std::move(store), std::move(key), range);
}

server::Response ServeObject(std::shared_ptr<storage::Store> store, const std::string& key,
                             const server::Request& request) {
  auto info = store->Stat(key);
  if (!info.ok()) return server::ErrorResponse(info.status());
  uint64_t size = info->size;
  bool unsatisfiable = false;
  auto span = ParseRangeHeader(request.headers.Get("Range"), size, &unsatisfiable);
  server::Response r;
  r.headers.Set("Accept-Ranges", "bytes");
  if (!info->etag.empty()) r.headers.Set("ETag", "\"" + info->etag + "\"");
  if (unsatisfiable) {
    r = server::ErrorResponse(416, "range not satisfiable for " + std::to_string(size) + " bytes");
    r.headers.Set("Content-Range", "bytes */" + std::to_string(size));
    return r;
  }
  r.headers.Set("Content-Type", ContentTypeFor(key));
  r.headers.Set("Content-Disposition", AttachmentFor(key));
  std::optional<storage::ByteRange> range;
  uint64_t length = size;
  if (span) {
    r.status = 206;
    length = span->last - span->first + 1;
    range = storage::ByteRange{span->first, length};
    r.headers.Set("Content-Range", "bytes " + std::to_string(span->first) + "-" +
                                       std::to_string(span->last) + "/" + std::to_string(size));
  }
  r.content_length = length;
  r.stream = request.method == "HEAD" || length == 0 ? server::StringSource("")
                                                     : StoreBody(std::move(store), key, range);
  return r;
}

}  // namespace ferry::tracker::artifacts
