// Server: binds the listener, runs the io threads, and stops in stages (design: server.h,
// session.h). Shutdown order matters: sessions -> io threads -> worker pool -> io_context ->
// core, because queued handlers and worker tasks hold sessions, and sessions use the core.

#include "server/server.h"

#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>

#include <unistd.h>

#include <optional>
#include <thread>

#include "base/log.h"
#include "server/session.h"
#include "server/signin.h"

namespace ferry::server {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

struct Server::Impl {
  Impl(ServerOptions options, const Router& router, std::shared_ptr<const AccessPolicy> policy)
      : core(std::make_unique<ServerCore>(std::move(options), router, std::move(policy))) {}

  // Runs on the acceptor's strand (as do its completions and the timer's).
  void DoAccept() {
    acceptor->async_accept(
        asio::make_strand(ioc), [this](boost::system::error_code ec, tcp::socket socket) {
          if (ec == asio::error::operation_aborted || !acceptor->is_open()) return;
          if (ec) {
            // Out of file descriptors and the like: wait a moment instead of spinning.
            Log(LogLevel::kWarn, "serve: accept failed: {}", ec.message());
            accept_backoff->expires_after(std::chrono::milliseconds(50));
            accept_backoff->async_wait(
                asio::bind_executor(acceptor->get_executor(), [this](boost::system::error_code) {
                  if (acceptor->is_open()) DoAccept();
                }));
            return;
          }
          // Responses go out as a header write then body writes; with Nagle's algorithm on, a
          // small body waits for the client's delayed ACK of the header (40 ms on Linux: every
          // MLflow log-batch answered in 44 ms). Nothing here wants batching of small writes.
          boost::system::error_code nodelay_ec;
          socket.set_option(tcp::no_delay(true), nodelay_ec);  // best effort: still serve
          if (!core->stopping) std::make_shared<Session>(std::move(socket), *core)->Start();
          DoAccept();
        });
  }

  // Declaration order is destruction order reversed: see the file comment.
  std::unique_ptr<ServerCore> core;
  asio::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  std::optional<asio::steady_timer> accept_backoff;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::vector<std::thread> threads;
  uint16_t port = 0;
  std::string url;
  Mutex mu;  // serializes Start() and Shutdown()
  bool running GUARDED_BY(mu) = false;
  bool stopped GUARDED_BY(mu) = false;
};

namespace {

// This host's name, for the Host check of requests without a token (browser_policy.h).
std::string MachineName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0) return "";
  return name;
}

// Runs the io_context until it is stopped. An exception that escapes a completion handler (a
// parser limit Beast reports by throwing, a bug) ends only the operation that threw: its
// handler, and with it the connection's last reference, is destroyed as the exception
// unwinds, which closes that connection; then the thread goes back to work (Asio's documented
// way: run() may be called again after a handler threw).
void RunWithExceptionBarrier(asio::io_context& ioc, Counter& caught) {
  for (;;) {
    try {
      ioc.run();
      return;
    } catch (const std::exception& e) {
      caught.Add(1);
      Log(LogLevel::kError, "serve: a connection ended with an exception (closed): {}", e.what());
    } catch (...) {
      caught.Add(1);
      Log(LogLevel::kError, "serve: a connection ended with an unknown exception (closed)");
    }
  }
}

}  // namespace

Server::Server(ServerOptions options, Router& router) {
  if (!options.metrics) options.metrics = std::make_shared<MetricsRegistry>();
  std::shared_ptr<MetricsRegistry> metrics = options.metrics;
  if (!router.Has("GET", "/healthz")) {
    router
        .Add("GET", "/healthz", Access::kPublic,
             [](const Request&) { return TextResponse(200, "ok\n"); })
        .IgnoreError();
  }
  auto policy = std::make_shared<AccessPolicy>(AccessPolicy{.tokens = options.tokens,
                                                            .read_tokens = options.read_tokens,
                                                            .areas = options.areas,
                                                            .allowed_hosts = options.allowed_hosts,
                                                            .machine_name = MachineName()});
  for (auto [method, path, handle] : {std::tuple{"POST", "/api/ferry/signin", &HandleSignIn},
                                      std::tuple{"POST", "/api/ferry/signout", &HandleSignOut},
                                      std::tuple{"GET", "/api/ferry/whoami", &HandleWhoAmI}}) {
    if (router.Has(method, path)) continue;
    router
        .Add(method, path, Access::kPublic,
             [policy, handle](const Request& r) { return handle(r, *policy); })
        .IgnoreError();
  }
  if (!router.Has("GET", "/metrics")) {
    router
        .Add("GET", "/metrics",
             [metrics](const Request&) {
               return TextResponse(200, metrics->RenderPrometheus(),
                                   "text/plain; version=0.0.4; charset=utf-8");
             })
        .IgnoreError();
  }
  impl_ = std::make_unique<Impl>(std::move(options), router, std::move(policy));
}

Server::~Server() { Shutdown(std::chrono::milliseconds(0)); }

Status CheckListenPolicy(const ServerOptions& o) {
  std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  boost::system::error_code ec;
  asio::ip::address addr = asio::ip::make_address(host, ec);
  if (ec) return InvalidArgument("serve: listen host '" + o.host + "' is not an IP address");
  if (!addr.is_loopback() && !o.allow_remote) {
    return InvalidArgument("serve: refusing to listen on non-loopback address " + o.host +
                           " (pass --allow-remote to serve other hosts)");
  }
  if (!addr.is_loopback() && o.tokens.empty() && o.read_tokens.empty() && !o.allow_anonymous) {
    return InvalidArgument("serve: refusing to serve " + o.host +
                           " without tokens: anyone who can reach it could read, write and "
                           "delete (give --token-file and/or --read-token-file, or "
                           "--allow-anonymous)");
  }
  return Status();
}

Status Server::Start() {
  Impl& s = *impl_;
  MutexLock lock(s.mu);
  if (s.running || s.stopped) return Internal("serve: the server was started already");
  const ServerOptions& o = s.core->options;
  FERRY_RETURN_IF_ERROR(CheckListenPolicy(o));
  std::string host = o.host == "localhost" ? "127.0.0.1" : o.host;
  boost::system::error_code ec;
  asio::ip::address addr = asio::ip::make_address(host, ec);
  tcp::endpoint endpoint(addr, o.port);
  std::string where = (addr.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(o.port);
  s.acceptor.emplace(asio::make_strand(s.ioc));
  s.accept_backoff.emplace(s.ioc);
  s.acceptor->open(endpoint.protocol(), ec);
  if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(endpoint, ec);
  if (!ec) s.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    s.acceptor.reset();
    return Unavailable("serve: cannot listen on " + where + ": " + ec.message());
  }
  s.port = s.acceptor->local_endpoint().port();
  s.url = "http://" + (addr.is_v6() ? "[" + host + "]" : host) + ":" + std::to_string(s.port);
  s.work.emplace(s.ioc.get_executor());
  s.DoAccept();
  int n = o.io_threads < 1 ? 1 : o.io_threads;
  Counter& caught = s.core->metrics->GetCounter(
      "ferry_http_connection_exceptions_total",
      "Connections closed because an exception escaped while serving them");
  for (int i = 0; i < n; ++i) {
    s.threads.emplace_back([&s, &caught] { RunWithExceptionBarrier(s.ioc, caught); });
  }
  s.running = true;
  return Status();
}

uint16_t Server::port() const { return impl_->port; }
std::string Server::url() const { return impl_->url; }
MetricsRegistry& Server::metrics() { return *impl_->core->metrics; }

void Server::Shutdown(std::chrono::milliseconds grace) {
  Impl& s = *impl_;
  MutexLock lock(s.mu);
  if (s.stopped) return;
  s.stopped = true;
  if (!s.running) return;
  ServerCore& core = *s.core;
  core.stopping = true;
  asio::post(s.acceptor->get_executor(), [&s] {
    boost::system::error_code ignored;
    s.acceptor->close(ignored);
    s.accept_backoff->cancel();
  });
  for (auto& session : core.Sessions()) session->CloseIdle();
  auto now = std::chrono::steady_clock::now();
  if (!core.WaitNoSessions(now + grace)) {
    Log(LogLevel::kInfo, "serve: shutdown grace period over; closing the remaining connections");
    for (auto& session : core.Sessions()) session->Abort();
    // Aborted sessions end once their pending operations and pulls return (Cancel()).
    core.WaitNoSessions(std::chrono::steady_clock::now() + std::chrono::seconds(5));
  }
  s.work.reset();
  s.ioc.stop();
  for (auto& t : s.threads) t.join();
  s.threads.clear();
  core.workers.reset();  // joins: a pull that ignores Cancel() blocks here
  s.running = false;
}

}  // namespace ferry::server
