#include "proxy/service/blob_response.h"

#include "proxy/service/byte_range.h"

namespace ferry::proxy {

namespace {

class BlobReaderBody final : public server::BodySource {
 public:
  explicit BlobReaderBody(std::unique_ptr<BlobReader> reader) : reader_(std::move(reader)) {}
  Result<size_t> Read(char* buf, size_t n) override { return reader_->Read(buf, n); }
  Result<FileSpan> NextFileSpan(size_t n) override { return reader_->NextFileSpan(n); }
  void Cancel() override { reader_->Cancel(); }

 private:
  std::unique_ptr<BlobReader> reader_;
};

}  // namespace

std::unique_ptr<server::BodySource> BlobBody(std::unique_ptr<BlobReader> reader) {
  return std::make_unique<BlobReaderBody>(std::move(reader));
}

int UpstreamStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kResourceExhausted:
      return 507;
    case StatusCode::kCancelled:
      return 503;
    default:
      return 502;
  }
}

server::Response ServeBlob(BlobCache& cache, const Digest& digest, uint64_t size,
                           std::shared_ptr<Fetcher> fetcher, const server::Request& request,
                           server::Headers headers) {
  RangeAnswer range = ParseRange(request.headers.Get("Range"), size);
  server::Response r;
  r.headers = std::move(headers);
  r.headers.Set("Accept-Ranges", "bytes");
  if (range.kind == RangeAnswer::kUnsatisfiable) {
    r.status = 416;
    r.headers.Set("Content-Range", ContentRangeValue(range, size));
    r.body = "range not satisfiable: the file has " + std::to_string(size) + " bytes\n";
    return r;
  }
  uint64_t length = size;
  std::optional<storage::ByteRange> wanted;
  if (range.kind == RangeAnswer::kPartial) {
    r.status = 206;
    r.headers.Set("Content-Range", ContentRangeValue(range, size));
    length = range.length();
    wanted = storage::ByteRange{range.first, length};
  }
  r.content_length = length;
  if (request.method == "HEAD" || length == 0) {
    r.stream = server::StringSource("");
    if (length == 0 && request.method != "HEAD") {
      // An empty blob: still verify it (the digest of nothing) so the cache holds it.
      auto reader = cache.Open(digest, size, std::move(fetcher), wanted);
      if (!reader.ok())
        return server::ErrorResponse(UpstreamStatusFor(reader.status()), reader.status().message());
      r.stream = BlobBody(std::move(*reader));
    }
    return r;
  }
  auto reader = cache.Open(digest, size, std::move(fetcher), wanted);
  if (!reader.ok()) {
    const Status& s = reader.status();
    int code = s.code() == StatusCode::kFailedPrecondition || s.code() == StatusCode::kOutOfRange
                   ? server::HttpStatusFor(s)
                   : UpstreamStatusFor(s);
    return server::ErrorResponse(code, s.message());
  }
  r.stream = BlobBody(std::move(*reader));
  return r;
}

}  // namespace ferry::proxy
