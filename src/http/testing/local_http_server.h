#pragma once
// A minimal HTTP/1.1 server on 127.0.0.1 for unit tests (fake metadata, container-credential
// and STS endpoints). One connection at a time, `Connection: close` on every answer. Not for
// production use.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "base/mutex.h"

namespace ferry::http::testing {

struct ServerRequest {
  std::string method;
  std::string target;                          // path + query as sent
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
};

struct ServerResponse {
  int status = 200;
  std::map<std::string, std::string> headers;
  std::string body;
  // A trickling server: after this many body bytes, one byte per trickle_interval until the
  // client goes away (tests of the minimum-progress rule).
  size_t trickle_after = static_cast<size_t>(-1);
  std::chrono::milliseconds trickle_interval{100};
};

// The answer of a server holding `body` to a GET or HEAD: 200 with the whole body, or with
// `honour_range` a 206 with Content-Range for a "Range: bytes=FROM-[LAST]" header (416 from the
// end on). `headers` are added to either.
ServerResponse ServeBody(const ServerRequest& request, const std::string& body,
                         std::map<std::string, std::string> headers, bool honour_range);

class LocalHttpServer final {
 public:
  using Handler = std::function<ServerResponse(const ServerRequest&)>;
  explicit LocalHttpServer(Handler handler);
  ~LocalHttpServer();

  int port() const { return port_; }
  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  std::vector<ServerRequest> requests() const;

 private:
  void Serve();
  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  mutable Mutex mu_;
  std::vector<ServerRequest> requests_ GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace ferry::http::testing
