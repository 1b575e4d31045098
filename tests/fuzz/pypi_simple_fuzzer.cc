// libFuzzer target: the PyPI simple API readers (proxy/pypi), which parse pages from any
// upstream index, plus the request-side parsers (Accept, paths). Besides "no crash", it checks
// the round trip the proxy relies on: a page it read renders to HTML and JSON that read back
// to the same files.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "proxy/pypi/names.h"
#include "proxy/pypi/negotiation.h"
#include "proxy/pypi/proxy_urls.h"
#include "proxy/pypi/simple_html.h"
#include "proxy/pypi/simple_json.h"

namespace pypi = ferry::proxy::pypi;

namespace {

// The one hash HTML carries (a fragment or metadata attribute): sha256, else the first.
pypi::Hashes Preferred(const pypi::Hashes& hashes) {
  if (hashes.empty()) return {};
  auto it = hashes.find("sha256");
  if (it == hashes.end()) it = hashes.begin();
  return {*it};
}

void CheckRoundTrip(const pypi::ProjectPage& upstream) {
  constexpr std::string_view kUrl = "http://nas:8080/pypi/simple/p/";
  pypi::ProjectPage page = pypi::RewriteForProxy(upstream, "/pypi/files/", "p");
  auto via_json = pypi::ParseProjectJson(pypi::RenderProjectJson(page), kUrl);
  if (!via_json.ok() || via_json->files.size() != page.files.size()) std::abort();
  auto via_html = pypi::ParseProjectHtml(pypi::RenderProjectHtml(page), kUrl, "p");
  if (!via_html.ok() || via_html->files.size() != page.files.size()) std::abort();
  for (size_t i = 0; i < page.files.size(); ++i) {
    const pypi::DistFile& f = page.files[i];
    const pypi::DistFile& h = via_html->files[i];
    if (h.filename != f.filename || h.hashes != Preferred(f.hashes) || h.yanked != f.yanked ||
        h.core_metadata.available != f.core_metadata.available ||
        h.core_metadata.hashes != Preferred(f.core_metadata.hashes) ||
        h.requires_python != f.requires_python) {
      std::abort();
    }
    // Every link leads back to this file through the stored (upstream) page.
    std::string_view path = h.url;
    constexpr std::string_view kPrefix = "http://nas:8080/pypi/files/";
    if (path.substr(0, kPrefix.size()) != kPrefix) std::abort();
    auto req = pypi::ParseFilePath(path.substr(kPrefix.size()));
    if (!req) std::abort();
    auto up = pypi::FindUpstreamFile(upstream, *req);
    if (!up || up->metadata) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto html = pypi::ParseProjectHtml(text, "https://pypi.example/simple/p/", "p");
  auto json = pypi::ParseProjectJson(text, "https://pypi.example/simple/p/");
  (void)pypi::ParseIndexHtml(text);
  (void)pypi::ParseIndexJson(text);
  (void)pypi::NegotiateSimpleFormat(text);
  (void)pypi::RouteSimplePath(text, "/pypi/simple/");
  if (auto req = pypi::ParseFilePath(text); req && json.ok()) {
    (void)pypi::FindUpstreamFile(*json, *req);
  }
  if (json.ok()) CheckRoundTrip(*json);
  return 0;
}
