#include "storage/s3/s3_client.h"

#include "aws/s3_xml.h"
#include "aws/sigv4.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/sha256_lanes.h"
#include "base/strings.h"
#include "storage/remote/ranged_get.h"
#include "storage/url.h"

namespace ferry::storage::s3 {

namespace {

std::string HostHeader(const aws::S3Endpoint& ep) {
  std::string_view a = ep.authority;
  if (ep.scheme == "http" && EndsWith(a, ":80")) a.remove_suffix(3);
  if (ep.scheme == "https" && EndsWith(a, ":443")) a.remove_suffix(4);
  return std::string(a);
}

// aws-chunked framing of `body`: each chunk "HEX;chunk-signature=SIG\r\n" DATA "\r\n", then
// the empty final chunk. The chunks' hashes are computed together (Sha256Each); each signature
// chains on the previous one, starting from the request's.
constexpr size_t kChunk = kSha256LaneMaxMessage;

struct ChunkFrames {
  std::vector<std::string> frames;  // one header per chunk and the final "0;...\r\n\r\n"
  std::vector<std::string_view> pieces;
};

size_t ChunkedLength(size_t n) {
  auto frame = [](size_t len) {
    char hex[32];
    return static_cast<size_t>(std::snprintf(hex, sizeof hex, "%zx", len)) +
           std::string_view(";chunk-signature=").size() + 64 + 2;
  };
  size_t total = frame(0) + 2;
  for (size_t off = 0; off < n; off += kChunk) {
    size_t len = std::min(kChunk, n - off);
    total += frame(len) + len + 2;
  }
  return total;
}

void FrameChunks(std::string_view body, const aws::SigningResult& seed, ChunkFrames& out) {
  std::vector<std::string_view> chunks;
  for (size_t off = 0; off < body.size(); off += kChunk) chunks.push_back(body.substr(off, kChunk));
  std::vector<Sha256Digest> hashes = Sha256Each(chunks);
  std::string previous = seed.signature;
  out.frames.reserve(chunks.size() + 1);
  for (size_t i = 0; i <= chunks.size(); ++i) {
    Sha256Digest h = i < chunks.size() ? hashes[i] : Sha256("");
    previous = aws::ChunkSignature(seed, previous, h);
    char hex[32];
    std::snprintf(hex, sizeof hex, "%zx", i < chunks.size() ? chunks[i].size() : size_t{0});
    out.frames.push_back(std::string(hex) + ";chunk-signature=" + previous + "\r\n" +
                         (i < chunks.size() ? "" : "\r\n"));
  }
  out.pieces.reserve(3 * chunks.size() + 1);
  for (size_t i = 0; i < chunks.size(); ++i) {
    out.pieces.push_back(out.frames[i]);
    out.pieces.push_back(chunks[i]);
    out.pieces.push_back("\r\n");
  }
  out.pieces.push_back(out.frames.back());
}

// An answer that says the server does not take aws-chunked bodies (rather than that this body
// arrived damaged, which is a signature mismatch and retried as such).
bool RefusesChunkedBodies(int status, std::string_view code) {
  return status == 501 || (status == 400 && (code == "NotImplemented" || code == "InvalidRequest" ||
                                             code == "InvalidArgument"));
}

}  // namespace

bool S3Client::ChunkedBody(const S3Call& call) const {
  using B = S3StoreOptions::BodyCheck;
  if (!call.chunked_ok || !call.verify_body || chunked_refused_.load()) return false;
  return opt_.body_check == B::kChunked;
}

std::string S3Client::UrlFor(std::string_view key) const {
  return FormatS3Url(opt_.bucket, key, opt_.url_profile);
}

void S3Client::CountRetry(const S3Call& call, const Status& why, std::chrono::milliseconds delay,
                          std::string_view resume) {
  ++retries_;
  std::string how(resume);
  if (how.empty()) how = call.send_body ? "and sending the body again" : "the request";
  for (const auto& [name, value] : call.query) {
    if (name == "partNumber") how = "and sending part " + value + " again";
  }
  remote::LogRetry(throttle_reporter_, opt_.retry.throttle_budget, call.op, why, delay, how);
}

Result<http::Response> S3Client::Once(const S3Call& call, const http::BodySink& sink,
                                      const http::ResponseStart& on_start) {
  const aws::S3Endpoint& ep = opt_.endpoint;
  std::string path;
  if (call.bucket_level) {
    path = ep.path_style ? "/" + opt_.bucket : "/";
  } else {
    path = ep.ObjectPath(opt_.bucket, PercentEncode(call.key, /*keep_slash=*/true));
  }
  std::string query = aws::CanonicalQueryString(call.query);
  http::Request req{
      .method = call.method,
      .url = ep.scheme + "://" + ep.authority + path + (query.empty() ? "" : "?" + query),
      .headers = call.headers,
      .body = call.body,
      .send_body = call.send_body,
      .data_transfer = call.data_transfer};
  std::string host = HostHeader(ep);
  req.headers.push_back({"Host", host});

  FERRY_ASSIGN_OR_RETURN(aws::Credentials creds, opt_.credentials->GetCredentials());
  const bool chunked = !creds.anonymous && ChunkedBody(call);
  const bool sign_body = call.sign_body || (call.verify_body && !creds.anonymous && Sha256Body());
  if (call.verify_body && !sign_body) {
    req.headers.push_back({"Content-MD5", Base64Encode(Md5(call.body))});
  }
  ChunkFrames framed;
  if (chunked) {
    req.headers.push_back({"Content-Encoding", "aws-chunked"});
    req.headers.push_back({"x-amz-decoded-content-length", std::to_string(call.body.size())});
    req.headers.push_back({"Content-Length", std::to_string(ChunkedLength(call.body.size()))});
  }
  if (!creds.anonymous) {
    auto now = std::chrono::system_clock::now();
    std::string payload =
        chunked          ? std::string(aws::kStreamingPayload)
        : sign_body      ? (call.body_sha256 ? HexEncode(*call.body_sha256) : Sha256Hex(call.body))
        : call.send_body ? std::string(aws::kUnsignedPayload)
                         : std::string(aws::kEmptyPayloadSha256);
    req.headers.push_back({"x-amz-date", FormatAmzDate(now)});
    req.headers.push_back({"x-amz-content-sha256", payload});
    if (!creds.session_token.empty()) {
      req.headers.push_back({"x-amz-security-token", creds.session_token});
    }
    aws::SigningInput in{
        .method = call.method, .encoded_path = path, .query = call.query, .payload_hash = payload};
    for (const auto& h : req.headers) {
      std::string lower = ToLower(h.name);
      if (lower == "host" || StartsWith(lower, "x-amz-") || lower == "content-md5" ||
          lower == "range" || lower == "if-match" || lower == "if-none-match" ||
          lower == "content-encoding" || lower == "content-length") {
        in.headers.emplace_back(h.name, h.value);
      }
    }
    auto sig = aws::SignV4(in, creds, ep.region, "s3", now);
    req.headers.push_back({"Authorization", sig.authorization});
    if (chunked) {
      FrameChunks(call.body, sig, framed);
      req.body_pieces = framed.pieces;
      size_t framed_size = 0;
      for (std::string_view p : framed.pieces) framed_size += p.size();
      if (framed_size != ChunkedLength(call.body.size())) {
        return Internal("aws-chunked framing of " + std::to_string(call.body.size()) +
                        " bytes is " + std::to_string(framed_size) + " bytes, expected " +
                        std::to_string(ChunkedLength(call.body.size())));
      }
    }
  }

  auto resp = opt_.http->Send(req, sink, on_start);
  std::string url = UrlFor(call.bucket_level ? "" : call.key);
  if (!resp.ok()) {
    return resp.status().WithContext(call.op + " '" + url + "' at " + ep.scheme + "://" + host);
  }
  if (!resp->ok() && chunked) {
    auto err = aws::ParseS3Error(resp->body);
    const std::string code = err ? err->code : "";
    if (RefusesChunkedBodies(static_cast<int>(resp->status), code)) {
      // A server without aws-chunked support: signed SHA-256 payloads from now on.
      if (!chunked_refused_.exchange(true)) {
        Log(LogLevel::kWarn,
            "{}://{} refused an aws-chunked upload body (HTTP {}); sending each part with its "
            "SHA-256 in the signature instead",
            ep.scheme, host, resp->status);
      }
      return Once(call, sink, on_start);
    }
    if (resp->status == 403 && code == "SignatureDoesNotMatch") {
      // A chunk whose signature does not match: damaged on the way, or wrong credentials (the
      // request's own signature). Sent once more with the SHA-256 of the whole body in the
      // signature, which tells the two apart: wrong credentials fail again, as such.
      Status why(StatusCode::kUnavailable,
                 call.op + " '" + url + "' failed: HTTP 403 SignatureDoesNotMatch (a chunk's " +
                     "signature did not match: the body arrived damaged, or the credentials are " +
                     "wrong; sent again with its SHA-256 in the signature)");
      CountRetry(call, why, std::chrono::milliseconds(0));
      S3Call plain = call;
      plain.chunked_ok = false;
      return Once(plain, sink, on_start);
    }
  }
  if (!resp->ok()) return S3ErrorToStatus(call, url, *resp);
  return resp;
}

Result<http::Response> S3Client::Call(const S3Call& call) {
  Result<http::Response> out = Internal("not sent");
  Status s = RunWithRetry(
      opt_.retry,
      [&]() -> Status {
        out = Once(call);
        return out.ok() ? Status() : out.status();
      },
      RetryHooks{.on_retry = [&](int, const Status& why, std::chrono::milliseconds d) {
        CountRetry(call, why, d);
      }});
  if (!s.ok()) return s;
  return out;
}

bool IsThrottlingErrorCode(std::string_view code) {
  static constexpr std::string_view kCodes[] = {"SlowDown",
                                                "Throttling",
                                                "ThrottlingException",
                                                "ThrottledException",
                                                "RequestThrottled",
                                                "RequestThrottledException",
                                                "TooManyRequestsException",
                                                "RequestLimitExceeded",
                                                "BandwidthLimitExceeded",
                                                "LimitExceededException",
                                                "ProvisionedThroughputExceededException",
                                                "PriorRequestNotComplete",
                                                "EC2ThrottledException"};
  for (auto c : kCodes) {
    if (code == c) return true;
  }
  return false;
}

Status S3ErrorToStatus(const S3Call& call, const std::string& url, const http::Response& resp) {
  auto err = aws::ParseS3Error(resp.body);
  ErrorDetail detail{.http_status = static_cast<int>(resp.status)};
  if (auto id = resp.Header("x-amz-request-id")) detail.request_id = std::string(*id);
  std::string code, message;
  if (err) {
    code = err->code;
    message = err->message;
    if (!err->request_id.empty()) detail.request_id = err->request_id;
  }
  detail.remote_code = code;
  long st = resp.status;
  bool throttled = st == 429 || st == 503 || IsThrottlingErrorCode(code);

  StatusCode sc = StatusCode::kInternal;
  std::string hint;
  if (st == 404) {
    sc = StatusCode::kNotFound;
    if (code == "NoSuchBucket")
      hint = "bucket does not exist";
    else if (code.empty() || code == "NoSuchKey")
      hint = "no such object";
  } else if (code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" ||
             code == "ExpiredToken" || code == "InvalidToken" || code == "TokenRefreshRequired" ||
             code == "AuthorizationHeaderMalformed" || code == "RequestTimeTooSkewed") {
    sc = StatusCode::kUnauthenticated;
    hint = "check the credentials; `ferry auth URL` shows which are used";
  } else if (st == 403) {
    sc = StatusCode::kPermissionDenied;
    if (code.empty()) hint = "access denied or bad credentials (a HEAD answer carries no details)";
  } else if (st == 301 || st == 307 || code == "PermanentRedirect") {
    sc = StatusCode::kFailedPrecondition;
    hint = err && !err->region.empty()
               ? "the bucket is in region '" + err->region + "'; pass --region " + err->region +
                     " (or set region in the profile)"
               : "the bucket is in another region or endpoint";
  } else if (st == 412) {
    sc = call.method == "PUT" ? StatusCode::kAlreadyExists : StatusCode::kFailedPrecondition;
    hint = call.method == "PUT" ? "object exists" : "object changed";
  } else if (st == 416) {
    sc = StatusCode::kOutOfRange;
  } else if (code == "BadDigest" || code == "XAmzContentSHA256Mismatch") {
    // The body the server received is not the one hashed: damaged on the way. Sent again.
    sc = StatusCode::kUnavailable;
    hint = "the body arrived damaged; sent again";
  } else if (throttled || st >= 500 || code == "RequestTimeout") {
    sc = st == 501 ? StatusCode::kUnimplemented : StatusCode::kUnavailable;
    if (throttled) {
      detail.throttled = true;
      detail.retry_after = http::RetryAfter(resp).value_or(std::chrono::milliseconds(0));
    }
  } else if (st == 409) {
    sc = StatusCode::kFailedPrecondition;
  } else if (st == 400) {
    sc = StatusCode::kInvalidArgument;
  }
  std::string msg = call.op + " '" + url + "' failed: HTTP " + std::to_string(st);
  if (!code.empty()) msg += " " + code;
  if (!message.empty()) msg += ": " + message;
  if (!hint.empty()) msg += " (" + hint + ")";
  if (!detail.request_id.empty()) msg += " [request id " + detail.request_id + "]";
  return Status(sc, msg, detail);
}

}  // namespace ferry::storage::s3
