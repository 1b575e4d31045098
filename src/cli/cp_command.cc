// ferry cp SRC DST: copies one object between any two stores (the parallel, recursive, resumable
// engine is the copy issue's work; this is the single-object path it builds on).
//
// DST ending in '/' (or naming an existing local directory) receives SRC's base name. The
// destination appears complete or not at all (atomic local rename, S3 PUT or completed
// multipart upload); on any failure nothing is left at DST. Same-store copies use the backend's
// server-side copy when it has one.

#include <fmt/format.h>

#include <chrono>

#include "base/log.h"
#include "base/strings.h"
#include "cli/command.h"

namespace ferry::cli {

namespace {

struct CpOptions {
  std::string src;
  std::string dst;
  bool recursive = false;
};

Status RunCp(Context& ctx, const CpOptions& o) {
  if (o.recursive) {
    return Unimplemented("ferry cp -r is not available yet; copy single objects for now");
  }
  FERRY_ASSIGN_OR_RETURN(auto src, ctx.registry->Open(o.src));
  FERRY_ASSIGN_OR_RETURN(auto dst, ctx.registry->Open(o.dst));
  if (src.key.empty() || src.url.trailing_slash) {
    return InvalidArgument("cp: source '" + o.src + "' is a directory or prefix; name one object");
  }
  FERRY_ASSIGN_OR_RETURN(auto info, src.store->Stat(src.key));
  std::string dst_key = dst.key;
  if (dst_key.empty() || dst.url.trailing_slash || LocalDirExists(dst)) {
    if (!dst_key.empty() && dst_key.back() != '/') dst_key.push_back('/');
    dst_key += BaseName(src.key);
  }
  auto start = std::chrono::steady_clock::now();
  if (src.store == dst.store && dst.store->capabilities().server_side_copy) {
    FERRY_RETURN_IF_ERROR(dst.store->Copy(src.key, dst_key));
  } else {
    FERRY_ASSIGN_OR_RETURN(auto writer, dst.store->NewWriter(dst_key, {}));
    uint64_t copied = 0;
    // If-Match pins the version we stat'ed: a source replaced mid-copy fails instead of mixing.
    Status s = src.store->Read(src.key, {.if_match = info.etag}, [&](std::string_view chunk) {
      copied += chunk.size();
      return writer->Append(chunk);
    });
    if (s.ok() && copied != info.size) {
      s = Status(StatusCode::kDataLoss,
                 fmt::format("cp '{}': read {} bytes, expected {}", o.src, copied, info.size));
    }
    if (!s.ok()) {
      writer->Abort();
      return s;
    }
    FERRY_RETURN_IF_ERROR(writer->Commit().status());
  }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Log(LogLevel::kInfo, "copied {} ({}) to {} in {:.2f} s ({}/s)", src.store->UrlFor(src.key),
      HumanBytes(info.size), dst.store->UrlFor(dst_key), secs,
      HumanBytes(static_cast<uint64_t>(static_cast<double>(info.size) / std::max(secs, 1e-6))));
  return Status();
}

}  // namespace

void AddCpCommand(CLI::App& app, Action& action) {
  auto o = std::make_shared<CpOptions>();
  auto* cmd = app.add_subcommand("cp", "Copy an object between paths and URLs");
  cmd->add_option("src", o->src, "Source path or URL")->required();
  cmd->add_option("dst", o->dst, "Destination path or URL (ending in / for a directory)")
      ->required();
  cmd->add_flag("-r,--recursive", o->recursive, "Copy a whole tree (not available yet)");
  cmd->callback([o, &action] { action = [o](Context& ctx) { return RunCp(ctx, *o); }; });
}

}  // namespace ferry::cli
