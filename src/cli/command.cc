#include "cli/command.h"

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "base/errno_status.h"

namespace ferry::cli {

Status Print(Context& ctx, std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), ctx.out) != text.size()) {
    if (errno == EPIPE) return Status(StatusCode::kCancelled, "output closed");
    return ErrnoToStatus(errno, "write to standard output");
  }
  return Status();
}

bool LocalDirExists(const storage::OpenedUrl& opened) {
  if (opened.url.scheme != storage::Scheme::kLocal) return false;
  std::error_code ec;
  return std::filesystem::is_directory("/" + opened.key, ec);
}

std::string JsonString(std::string_view s) {
  return nlohmann::json(std::string(s))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace ferry::cli
