#include "proxy/pypi_routes/upstream_stream.h"

#include <thread>

#include "base/mutex.h"
#include "base/strings.h"
#include "proxy/service/blob_response.h"

namespace ferry::proxy::pypi {

namespace {

// What the upstream thread and the client's BodySource share.
struct Pipe {
  Mutex mu;
  CondVar cv;
  bool started GUARDED_BY(mu) = false;  // the answer's headers arrived (or it failed)
  std::optional<uint64_t> length GUARDED_BY(mu);
  std::string buf GUARDED_BY(mu);
  bool done GUARDED_BY(mu) = false;
  Status status GUARDED_BY(mu);
  bool cancelled GUARDED_BY(mu) = false;
};

class PipeBody final : public server::BodySource {
 public:
  PipeBody(std::shared_ptr<Pipe> pipe, std::thread thread)
      : pipe_(std::move(pipe)), thread_(std::move(thread)) {}
  ~PipeBody() override {
    Cancel();
    if (thread_.joinable()) thread_.join();
  }
  Result<size_t> Read(char* out, size_t n) override {
    Pipe& p = *pipe_;
    MutexLock lock(p.mu);
    p.cv.Wait(lock, [&]() REQUIRES(p.mu) { return !p.buf.empty() || p.done || p.cancelled; });
    if (p.cancelled) return Status(StatusCode::kCancelled, "client gone");
    if (p.buf.empty()) {
      if (!p.status.ok()) return p.status;
      return size_t{0};
    }
    size_t k = std::min(n, p.buf.size());
    std::copy_n(p.buf.data(), k, out);
    p.buf.erase(0, k);
    p.cv.NotifyAll();
    return k;
  }
  void Cancel() override {
    MutexLock lock(pipe_->mu);
    pipe_->cancelled = true;
    pipe_->cv.NotifyAll();
  }

 private:
  std::shared_ptr<Pipe> pipe_;
  std::thread thread_;
};

}  // namespace

server::Response StreamFromUpstream(std::shared_ptr<UpstreamClient> client, std::string url,
                                    const std::string& method, server::Headers headers) {
  auto pipe = std::make_shared<Pipe>();
  std::thread thread([client, url, method, pipe] {
    UpstreamRequest req;
    req.method = method == "HEAD" ? "HEAD" : "GET";
    req.url = url;
    req.data_transfer = true;
    auto on_start = [&pipe](const http::Response& r) -> Status {
      MutexLock lock(pipe->mu);
      if (auto len = r.Header("content-length")) pipe->length = ParseUint64(*len);
      pipe->started = true;
      pipe->cv.NotifyAll();
      return Status();
    };
    auto sink = [&pipe](std::string_view chunk) -> Status {
      Pipe& p = *pipe;
      MutexLock lock(p.mu);
      p.cv.Wait(lock, [&]() REQUIRES(p.mu) { return p.buf.size() < kStreamBuffer || p.cancelled; });
      if (p.cancelled) return Status(StatusCode::kCancelled, "client gone");
      p.buf.append(chunk);
      p.cv.NotifyAll();
      return Status();
    };
    auto resp = client->Send(req, sink, on_start);
    Status s = !resp.ok()   ? resp.status()
               : resp->ok() ? Status()
                            : UpstreamError(req.method, url, *resp);
    MutexLock lock(pipe->mu);
    pipe->status = s;
    pipe->started = true;
    pipe->done = true;
    pipe->cv.NotifyAll();
  });
  Status failed;
  std::optional<uint64_t> length;
  {
    MutexLock lock(pipe->mu);
    pipe->cv.Wait(lock, [&]() REQUIRES(pipe->mu) { return pipe->started; });
    if (pipe->done && !pipe->status.ok() && pipe->buf.empty()) failed = pipe->status;
    length = pipe->length;
  }
  if (!failed.ok()) {
    thread.join();
    return server::ErrorResponse(UpstreamStatusFor(failed), failed.message());
  }
  server::Response r;
  r.headers = std::move(headers);
  if (method == "HEAD") {
    thread.join();
    r.stream = server::StringSource("");
    r.content_length = length.value_or(0);
    return r;
  }
  r.stream = std::make_unique<PipeBody>(pipe, std::move(thread));
  r.content_length = length;
  return r;
}

}  // namespace ferry::proxy::pypi
