#include "ui/ui_assets.h"

#include <algorithm>
#include <array>
#include <utility>

namespace ferry::ui {

const Asset* FindAsset(std::span<const Asset> assets, std::string_view path) {
  auto it = std::lower_bound(assets.begin(), assets.end(), path,
                             [](const Asset& a, std::string_view p) { return a.path < p; });
  if (it == assets.end() || it->path != path) return nullptr;
  return &*it;
}

std::string_view ContentTypeFor(std::string_view path) {
  static constexpr std::array<std::pair<std::string_view, std::string_view>, 9> kTypes = {{
      {".html", "text/html; charset=utf-8"},
      {".js", "text/javascript; charset=utf-8"},
      {".mjs", "text/javascript; charset=utf-8"},
      {".css", "text/css; charset=utf-8"},
      {".svg", "image/svg+xml"},
      {".png", "image/png"},
      {".ico", "image/x-icon"},
      {".json", "application/json"},
      {".txt", "text/plain; charset=utf-8"},
  }};
  for (const auto& [ext, type] : kTypes) {
    if (path.ends_with(ext)) return type;
  }
  return "application/octet-stream";
}

}  // namespace ferry::ui
