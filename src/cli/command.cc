#include "cli/command.h"

#include <cerrno>
#include <csignal>

#include "base/errno_status.h"
#include "base/strings.h"

namespace ferry::cli {

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void OnStopSignal(int) { g_interrupted.store(true); }
}  // namespace

void StopOnSignals() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

const std::atomic<bool>& InterruptFlag() { return g_interrupted; }

Status Print(Context& ctx, std::string_view text) {
  ctx.printed += text.size();
  if (std::fwrite(text.data(), 1, text.size(), ctx.out) != text.size()) {
    if (errno == EPIPE) {
      ctx.output_closed = true;
      return Status(StatusCode::kCancelled, "output closed");
    }
    return ErrnoToStatus(errno, "write to standard output");
  }
  return Status();
}

std::unique_ptr<transfer::StallWatch> WatchStore(Context& ctx, const storage::OpenedUrl& opened,
                                                 std::string what) {
  std::shared_ptr<storage::Store> store = opened.store;
  const std::string kind = store->Describe().kind;
  if (kind == "local" || kind == "memory") return nullptr;
  auto watch = std::make_unique<transfer::StallWatch>(
      [&ctx] { return ctx.printed.load(); },
      [store] { return "'" + store->Describe().endpoint + "'"; },
      [store] { return store->retry_count(); });
  watch->Begin(what);
  return watch;
}

bool LocalDirExists(const storage::OpenedUrl& opened) {
  return opened.store->IsDirectory(opened.key);
}

Status Usage(Context& ctx, Status s) {
  if (!s.ok()) ctx.usage_error = true;
  return s;
}

Result<storage::ParsedUrl> ParseUrlArg(Context& ctx, std::string_view url) {
  auto parsed = storage::ParseUrl(url);
  if (!parsed.ok()) return Usage(ctx, parsed.status());
  return parsed;
}

Result<storage::OpenedUrl> OpenUrl(Context& ctx, std::string_view url) {
  FERRY_RETURN_IF_ERROR(ParseUrlArg(ctx, url).status());
  return ctx.registry->Open(url);
}

Status ParseSize(Context& ctx, const std::string& text, const char* flag, uint64_t* out) {
  if (text.empty()) return Status();
  std::string t = text;
  if (EndsWith(t, "/s")) t.resize(t.size() - 2);
  auto v = ParseByteSize(t);
  if (!v) {
    return Usage(
        ctx, InvalidArgument(std::string(flag) + " '" + text + "' is not a size (e.g. 16M, 1G)"));
  }
  *out = *v;
  return Status();
}

}  // namespace ferry::cli
