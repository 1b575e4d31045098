#include "server/http_types.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>

#include "base/strings.h"

namespace ferry::server {

namespace {

std::optional<std::string_view> Find(const std::vector<std::pair<std::string, std::string>>& v,
                                     std::string_view name) {
  for (const auto& [k, val] : v) {
    if (k == name) return std::string_view(val);
  }
  return std::nullopt;
}

class StringBodySource final : public BodySource {
 public:
  explicit StringBodySource(std::string data) : data_(std::move(data)) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

class StringReader final : public BodyReader {
 public:
  StringReader(std::string data, std::optional<uint64_t> length)
      : data_(std::move(data)), length_(length) {}
  Result<size_t> Read(char* buf, size_t n) override {
    size_t k = std::min(n, data_.size() - pos_);
    std::memcpy(buf, data_.data() + pos_, k);
    pos_ += k;
    return k;
  }
  std::optional<uint64_t> content_length() const override { return length_; }

 private:
  std::string data_;
  size_t pos_ = 0;
  std::optional<uint64_t> length_;
};

}  // namespace

std::shared_ptr<BodyReader> StringBodyReader(std::string data,
                                             std::optional<uint64_t> content_length) {
  return std::make_shared<StringReader>(std::move(data), content_length);
}

void Headers::Add(std::string name, std::string value) {
  fields_.emplace_back(std::move(name), std::move(value));
}

void Headers::Set(std::string_view name, std::string value) {
  Remove(name);
  fields_.emplace_back(std::string(name), std::move(value));
}

void Headers::Remove(std::string_view name) {
  std::erase_if(fields_, [&](const auto& f) { return EqualsIgnoreCase(f.first, name); });
}

std::optional<std::string_view> Headers::Get(std::string_view name) const {
  for (const auto& [k, v] : fields_) {
    if (EqualsIgnoreCase(k, name)) return std::string_view(v);
  }
  return std::nullopt;
}

std::optional<std::string_view> Request::Query(std::string_view name) const {
  return Find(query, name);
}

std::optional<std::string_view> Request::Param(std::string_view name) const {
  return Find(params, name);
}

std::unique_ptr<BodySource> StringSource(std::string data) {
  return std::make_unique<StringBodySource>(std::move(data));
}

Response TextResponse(int status, std::string text, std::string content_type) {
  Response r;
  r.status = status;
  r.headers.Set("Content-Type", std::move(content_type));
  r.body = std::move(text);
  return r;
}

Response JsonResponse(int status, std::string json) {
  return TextResponse(status, std::move(json), "application/json");
}

Response ErrorResponse(int status, std::string_view message) {
  return ErrorResponse(status, message, "");
}

Response ErrorResponse(int status, std::string_view message, std::string_view error_code) {
  std::string line(message);
  for (char& c : line) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  nlohmann::json j{{"error", line}};
  if (!error_code.empty()) {
    j["error_code"] = error_code;
    j["message"] = line;
  }
  return JsonResponse(status,
                      j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

int HttpStatusFor(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return 200;
    case StatusCode::kInvalidArgument:
      return 400;
    case StatusCode::kNotFound:
      return 404;
    case StatusCode::kAlreadyExists:
      return 409;
    case StatusCode::kPermissionDenied:
      return 403;
    case StatusCode::kUnauthenticated:
      return 401;
    case StatusCode::kFailedPrecondition:
      return 412;
    case StatusCode::kUnavailable:
      return 503;
    case StatusCode::kDeadlineExceeded:
      return 504;
    case StatusCode::kResourceExhausted:
      return 507;
    case StatusCode::kUnimplemented:
      return 501;
    case StatusCode::kOutOfRange:
      return 416;
    case StatusCode::kDataLoss:
    case StatusCode::kCancelled:
    case StatusCode::kInternal:
      return 500;
  }
  return 500;
}

Response ErrorResponse(const Status& status) {
  return ErrorResponse(HttpStatusFor(status), status.message());
}

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 204:
      return "No Content";
    case 206:
      return "Partial Content";
    case 302:
      return "Found";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 412:
      return "Precondition Failed";
    case 413:
      return "Content Too Large";
    case 416:
      return "Range Not Satisfiable";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 507:
      return "Insufficient Storage";
    default:
      return "";
  }
}

}  // namespace ferry::server
