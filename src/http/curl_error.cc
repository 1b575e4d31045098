#include "http/curl_error.h"

#include <curl/curl.h>

#include <string>

namespace ferry::http {

Status CurlError(int code, std::string_view detail) {
  auto c = static_cast<CURLcode>(code);
  std::string msg = curl_easy_strerror(c);
  if (!detail.empty()) {
    msg += " (";
    msg += detail;
    msg += ")";
  }
  switch (c) {
    case CURLE_OPERATION_TIMEDOUT:
      return Status(StatusCode::kDeadlineExceeded, "timed out: " + msg);
    case CURLE_COULDNT_CONNECT:
      return Unavailable("cannot connect: " + msg);
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
      return Unavailable("cannot resolve host: " + msg);
    case CURLE_SEND_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_HTTP2:
    case CURLE_HTTP2_STREAM:
    case CURLE_SSL_CONNECT_ERROR:
      return Unavailable("connection failed: " + msg);
    case CURLE_PEER_FAILED_VERIFICATION:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CERTPROBLEM:
      return Status(StatusCode::kFailedPrecondition, "TLS verification failed: " + msg);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgument("bad URL: " + msg);
    case CURLE_ABORTED_BY_CALLBACK:
      return Status(StatusCode::kCancelled, "transfer aborted");
    default:
      return Unavailable("HTTP transfer failed: " + msg);
  }
}

}  // namespace ferry::http
