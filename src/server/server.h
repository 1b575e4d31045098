#pragma once
// The HTTP/1.1 server behind `ferry serve` (house style 26): owns the sockets, limits,
// timeouts, bearer-token auth, target validation and access log; everything else is a handler
// on a Router. Boost.Beast/Asio stay inside src/server (this header does not include them).
//
// Threads: `io_threads` run Asio (accept, read, write: never blocking). Handlers and
// BodySource::Read() run on a WorkerPool (server/worker_pool.h) that grows up to
// `max_workers`; each connection has one strand, and a streaming response keeps exactly one
// chunk (stream_chunk bytes) in flight: pull on a worker -> async write on the strand -> next
// pull. A slow source holds only its own worker; a slow client only stops its own pulls.
// Docs: docs/semantics/serve.md.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "server/admission.h"
#include "server/metrics.h"
#include "server/router.h"

namespace ferry::server {

struct ServerOptions {
  std::string host = "127.0.0.1";  // an IP address or "localhost"
  uint16_t port = 0;               // 0: any free port (see Server::port())
  // Binding an address that is not loopback is refused unless this is set (ferry serve
  // --allow-remote): the server is meant for one host unless an operator says otherwise.
  bool allow_remote = false;
  int io_threads = 2;
  int max_workers = 256;            // handler and body-pull threads at most (see worker_pool.h)
  size_t header_limit = 16 * 1024;  // request line + headers; more: 431
  size_t body_limit = 16 * 1024 * 1024;  // request body; more: 413
  size_t stream_chunk = 256 * 1024;      // bytes per BodySource::Read (per connection)
  // A request (from its first byte, or from the previous response on a kept-alive connection)
  // must arrive within this; otherwise the connection is closed.
  std::chrono::milliseconds read_timeout{30'000};
  // Each write to the client (one chunk) must finish within this; otherwise it is closed.
  std::chrono::milliseconds write_timeout{60'000};
  // Accepted bearer tokens that may call every route; with both lists empty there is no
  // authentication. /healthz never needs a token.
  std::vector<std::string> tokens;
  // Bearer tokens that may call only routes registered as Access::kRead (router.h); a write
  // route answers them 403 PERMISSION_DENIED.
  std::vector<std::string> read_tokens;
  // Listening on a non-loopback address (allow_remote) without any token is refused unless this
  // is set (ferry serve --allow-anonymous): anyone who reaches the port could write and delete.
  bool allow_anonymous = false;
  // Parts of the path space with their own rules (server/admission.h): e.g. /hf/ and /pypi/
  // readable without a token while the tracker needs one; 401s offering HTTP Basic for pip.
  std::vector<Area> areas;
  // Host names a request without a token may use besides IP literals, localhost and this
  // machine's name (DNS rebinding: server/browser_policy.h). "*": any.
  std::vector<std::string> allowed_hosts;
  // On a server with tokens, the body limit of a request that carries none (an anonymous read
  // of an open area: paths-info); routes of Access::kPublic take no body at all.
  size_t anonymous_body_limit = 1024 * 1024;
  // Text no client is shown (the data directory's absolute path, the spool directory, the
  // database file): replaced by "<data>" in every error answer's body and X-Error-Message.
  std::vector<std::string> private_paths;
  // Where the server's own metrics go (and what /metrics renders); null: the server's own.
  std::shared_ptr<MetricsRegistry> metrics;
};

// The listening rules of `o` (a host that is an IP address or "localhost"; a non-loopback one
// only with allow_remote, and then only with tokens or allow_anonymous): kInvalidArgument naming
// what is missing. Start() applies them; a caller may check them before it creates anything.
Status CheckListenPolicy(const ServerOptions& o);

class Server final {
 public:
  // Adds GET /healthz ("ok", public), GET /metrics and the UI's sign-in routes
  // (server/signin.h) to `router` unless it already has them. The router must outlive the
  // server and not change after Start().
  Server(ServerOptions options, Router& router);
  ~Server();  // Shutdown(0) when still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Binds, listens and starts the threads. InvalidArgument for a bad or non-loopback host
  // (without allow_remote; without tokens and allow_anonymous), Unavailable when the address
  // cannot be bound.
  Status Start();
  // The bound port (the real one after binding port 0); 0 before Start().
  uint16_t port() const;
  // "http://127.0.0.1:8780" ("[::1]" for IPv6).
  std::string url() const;
  MetricsRegistry& metrics();

  // Graceful stop: closes the listener at once, closes idle connections, lets responses in
  // flight finish for up to `grace`, then aborts the rest (BodySource::Cancel) and joins every
  // thread. Idempotent; call from any thread but a handler's.
  void Shutdown(std::chrono::milliseconds grace);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ferry::server
