#pragma once
// Raw client sockets for the server's socket tests (server_test.cc, server_stream_test.cc):
// requests are written byte for byte, so malformed and partial ones can be sent.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/strings.h"

namespace ferry::server::testing {

// A connection to 127.0.0.1:port with a 20 s receive timeout; -1 when refused.
inline int Connect(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return -1;
  }
  timeval tv{.tv_sec = 20, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

// Sends all of `s` (stops quietly when the peer closed).
inline void SendAll(int fd, std::string_view s) {
  while (!s.empty()) {
    ssize_t n = send(fd, s.data(), s.size(), MSG_NOSIGNAL);
    if (n <= 0) return;
    s.remove_prefix(static_cast<size_t>(n));
  }
}

struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool complete = false;  // the whole body arrived (by length, last chunk or EOF)
};

// Reads one response from a connection (buffering what follows for the next call).
class Reader {
 public:
  explicit Reader(int fd) : fd_(fd) {}
  HttpResult Read(bool head = false) {
    HttpResult r;
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!Fill()) return r;
    }
    std::string head_text = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    auto lines = Split(head_text, '\n');
    r.status = std::atoi(std::string(lines[0].substr(9, 3)).c_str());
    for (size_t i = 1; i < lines.size(); ++i) {
      auto colon = lines[i].find(':');
      r.headers[ToLower(Trim(lines[i].substr(0, colon)))] =
          std::string(Trim(lines[i].substr(colon + 1)));
    }
    if (head) {
      r.complete = true;
    } else if (r.headers.contains("content-length")) {
      uint64_t n = std::stoull(r.headers["content-length"]);
      while (buf_.size() < n && Fill()) {
      }
      size_t k = std::min<size_t>(n, buf_.size());
      r.body = buf_.substr(0, k);
      buf_.erase(0, k);
      r.complete = k == n;
    } else if (r.headers["transfer-encoding"] == "chunked") {
      while (true) {
        size_t eol;
        while ((eol = buf_.find("\r\n")) == std::string::npos) {
          if (!Fill()) return r;
        }
        size_t n = std::stoul(buf_.substr(0, eol), nullptr, 16);
        while (buf_.size() < eol + 2 + n + 2) {
          if (!Fill()) return r;
        }
        r.body += buf_.substr(eol + 2, n);
        buf_.erase(0, eol + 2 + n + 2);
        if (n == 0) break;
      }
      r.complete = true;
    } else {
      while (Fill()) {
      }
      r.body = std::move(buf_);
      r.complete = true;
    }
    return r;
  }

 private:
  bool Fill() {
    char tmp[65536];
    ssize_t n = recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_;
  std::string buf_;
};

inline HttpResult Exchange(uint16_t port, const std::string& raw, bool head = false) {
  int fd = Connect(port);
  if (fd < 0) return {};
  SendAll(fd, raw);
  Reader reader(fd);
  HttpResult r = reader.Read(head);
  close(fd);
  return r;
}

inline HttpResult Get(uint16_t port, const std::string& target, const std::string& extra = "") {
  return Exchange(port, "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
                            extra + "\r\n");
}

}  // namespace ferry::server::testing
