#include "http/testing/local_http_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <thread>

#include "base/strings.h"

namespace ferry::http::testing {

ServerResponse ServeBody(const ServerRequest& r, const std::string& body,
                         std::map<std::string, std::string> headers, bool honour_range) {
  ServerResponse resp{200, std::move(headers), body};
  auto it = r.headers.find("range");
  if (!honour_range || it == r.headers.end() || !StartsWith(it->second, "bytes=")) return resp;
  std::string_view spec = std::string_view(it->second).substr(6);
  size_t dash = spec.find('-');
  auto from = ParseUint64(spec.substr(0, dash));
  auto last = dash == std::string_view::npos ? std::nullopt : ParseUint64(spec.substr(dash + 1));
  if (!from) return resp;
  if (*from >= body.size()) return ServerResponse{416, {}, ""};
  uint64_t to = std::min<uint64_t>(last.value_or(body.size() - 1), body.size() - 1);
  resp.status = 206;
  resp.headers["Content-Range"] = "bytes " + std::to_string(*from) + "-" + std::to_string(to) +
                                  "/" + std::to_string(body.size());
  resp.body = body.substr(*from, to - *from + 1);
  return resp;
}

LocalHttpServer::LocalHttpServer(Handler handler) : handler_(std::move(handler)) {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  ::setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(listen_fd_, 16);
  socklen_t len = sizeof addr;
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  port_ = ntohs(addr.sin_port);
  thread_ = std::thread([this] { Serve(); });
}

LocalHttpServer::~LocalHttpServer() {
  stop_ = true;
  ::shutdown(listen_fd_, SHUT_RDWR);
  thread_.join();
  ::close(listen_fd_);
}

std::vector<ServerRequest> LocalHttpServer::requests() const {
  MutexLock lock(mu_);
  return requests_;
}

void LocalHttpServer::Serve() {
  while (!stop_) {
    pollfd pfd{listen_fd_, POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;
    int fd = ::accept(listen_fd_, nullptr, nullptr);
    if (fd < 0) continue;
    std::string data;
    char buf[8192];
    size_t header_end = std::string::npos;
    while (header_end == std::string::npos) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      data.append(buf, static_cast<size_t>(n));
      header_end = data.find("\r\n\r\n");
    }
    if (header_end == std::string::npos) {
      ::close(fd);
      continue;
    }
    ServerRequest req;
    std::istringstream head(data.substr(0, header_end));
    std::string line;
    std::getline(head, line);
    std::istringstream first(line);
    first >> req.method >> req.target;
    while (std::getline(head, line)) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      req.headers[ToLower(Trim(line.substr(0, colon)))] = std::string(Trim(line.substr(colon + 1)));
    }
    size_t want = 0;
    if (auto it = req.headers.find("content-length"); it != req.headers.end()) {
      want = std::stoul(it->second);
    }
    req.body = data.substr(header_end + 4);
    while (req.body.size() < want) {
      ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      req.body.append(buf, static_cast<size_t>(n));
    }
    ServerResponse resp = handler_(req);
    {
      MutexLock lock(mu_);
      requests_.push_back(req);
    }
    std::string out = "HTTP/1.1 " + std::to_string(resp.status) + " X\r\n";
    for (const auto& [k, v] : resp.headers) out += k + ": " + v + "\r\n";
    out += "Content-Length: " + std::to_string(resp.body.size()) + "\r\nConnection: close\r\n\r\n";
    if (req.method != "HEAD") out += resp.body;
    size_t fast_end = out.size();
    if (req.method != "HEAD" && resp.trickle_after < resp.body.size()) {
      fast_end = out.size() - resp.body.size() + resp.trickle_after;
    }
    size_t off = 0;
    while (off < out.size() && !stop_) {
      size_t len = off < fast_end ? fast_end - off : 1;
      if (off >= fast_end) std::this_thread::sleep_for(resp.trickle_interval);
      ssize_t n = ::send(fd, out.data() + off, len, MSG_NOSIGNAL);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
    ::close(fd);
  }
}

}  // namespace ferry::http::testing
