#include "proxy/upstream/http_fetcher.h"

#include <charconv>

namespace ferry::proxy {

std::optional<uint64_t> ContentRangeStart(std::string_view value) {
  if (!value.starts_with("bytes ")) return std::nullopt;
  value.remove_prefix(6);
  uint64_t first = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), first);
  if (ec != std::errc() || p == value.data() + value.size() || *p != '-') return std::nullopt;
  return first;
}

Status HttpFetcher::Fetch(const storage::ByteRange& range, const storage::ByteSink& sink) {
  UpstreamRequest req{.method = "GET", .url = url_, .headers = headers_, .data_transfer = true};
  bool ranged = range.offset > 0 || range.length.has_value();
  if (ranged) {
    std::optional<uint64_t> end;
    if (range.length) end = range.offset + *range.length;
    req.headers.push_back({"Range", http::RangeHeaderValue(range.offset, end)});
  }
  // The Hub's files must arrive as they are stored: a gzip-encoded body would not hash right.
  req.headers.push_back({"Accept-Encoding", "identity"});
  uint64_t skip = 0;
  uint64_t left = range.length.value_or(UINT64_MAX);
  auto on_start = [&](const http::Response& resp) -> Status {
    if (resp.status == 206) {
      auto cr = resp.Header("content-range");
      auto first = cr ? ContentRangeStart(*cr) : std::nullopt;
      if (!first || *first != range.offset) {
        return Unavailable("GET '" + Describe() + "': 206 answer for another range (" +
                           std::string(cr.value_or("no Content-Range")) + ")");
      }
    } else {
      skip = range.offset;  // 200: the whole file
    }
    return Status();
  };
  auto cut = [&](std::string_view chunk) -> Status {
    if (skip > 0) {
      size_t n = static_cast<size_t>(std::min<uint64_t>(skip, chunk.size()));
      chunk.remove_prefix(n);
      skip -= n;
    }
    if (chunk.empty() || left == 0) return Status();
    if (chunk.size() > left) chunk = chunk.substr(0, left);
    left -= chunk.size();
    return sink(chunk);
  };
  auto resp = client_->Send(req, cut, on_start);
  if (!resp.ok()) return resp.status();
  if (resp->status == 416 && range.length.value_or(1) == 0) return Status();
  if (!resp->ok()) return UpstreamError("GET", url_, *resp);
  return Status();
}

}  // namespace ferry::proxy
