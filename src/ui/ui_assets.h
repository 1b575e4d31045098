#pragma once
// The web UI's files (src/ui/web/*, and uPlot's dist files from npm), embedded into the binary
// at build time by embed_assets.cmake, so `ferry serve` needs no files at run time and loads
// nothing from the internet (docs/semantics/ui.md).

#include <span>
#include <string_view>

namespace ferry::ui {

// One embedded file. Every view points into static storage: valid for the whole program.
struct Asset {
  std::string_view path;  // relative to /ui/: "app.js", "views/runs.js", "uplot/uPlot.min.css"
  std::string_view etag;  // quoted strong ETag: the first 16 hex digits of the SHA-256
  std::string_view data;  // the file's bytes
};

// Every embedded file, sorted by path (generated at build time).
std::span<const Asset> EmbeddedAssets();

// The asset at `path` in `assets` (sorted by path), or null.
const Asset* FindAsset(std::span<const Asset> assets, std::string_view path);

// The Content-Type for a file name by its extension (".js" -> text/javascript; charset=utf-8,
// ...); application/octet-stream when unknown.
std::string_view ContentTypeFor(std::string_view path);

}  // namespace ferry::ui
