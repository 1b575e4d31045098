#include "proxy/pypi/simple_html.h"

#include "base/strings.h"
#include "proxy/pypi/html_tokens.h"
#include "proxy/pypi/names.h"
#include "proxy/pypi/url.h"
#include "proxy/pypi/wire_values.h"

namespace ferry::proxy::pypi {
namespace {

void AppendAttribute(std::string& out, std::string_view name, std::string_view value) {
  out.push_back(' ');
  out.append(name);
  out.append("=\"");
  AppendHtmlEscaped(out, value);
  out.push_back('"');
}

void AppendHeader(std::string& out, std::string_view api_version, std::string_view title) {
  out.append("<!DOCTYPE html>\n<html>\n  <head>\n    <meta name=\"pypi:repository-version\"");
  out.append(" content=\"");
  AppendHtmlEscaped(out, api_version);
  out.append("\">\n    <title>");
  AppendHtmlEscaped(out, title);
  out.append("</title>\n  </head>\n  <body>\n");
}

constexpr std::string_view kFooter = "  </body>\n</html>\n";

}  // namespace

Result<ProjectPage> ParseProjectHtml(std::string_view html, std::string_view page_url,
                                     std::string_view project) {
  std::string base(page_url);
  if (!ResolveUrl(base, "")) {
    return InvalidArgument("parse PyPI project page: '" + base + "' is not an http(s) URL");
  }
  ProjectPage page;
  page.name = NormalizeName(project);
  Status status;
  ScanHtmlTags(html, [&](const HtmlTag& tag) {
    if (tag.name == "base") {
      if (auto href = tag.Find("href")) {
        if (auto resolved = ResolveUrl(page_url, *href))
          base = std::string(SplitFragment(*resolved).first);
      }
      return;
    }
    if (tag.name == "meta") {
      auto name = tag.Find("name");
      auto content = tag.Find("content");
      if (name && content && *name == "pypi:repository-version") {
        page.upstream_api_version = std::string(Trim(*content));
        if (!IsSupportedApiVersion(page.upstream_api_version) && status.ok()) {
          status = InvalidArgument("parse PyPI project page '" + std::string(page_url) +
                                   "': unsupported repository version '" +
                                   page.upstream_api_version + "'");
        }
      }
      return;
    }
    if (tag.name != "a") return;
    auto href = tag.Find("href");
    if (!href) {
      page.skipped.push_back("link without href: '" + Abbreviate(tag.text) + "'");
      return;
    }
    auto url = ResolveUrl(base, *href);
    if (!url) {
      page.skipped.push_back("link to a non-http(s) URL: '" + Abbreviate(*href) + "'");
      return;
    }
    auto [no_fragment, fragment] = SplitFragment(*url);
    DistFile f;
    auto filename = FilenameOfUrl(no_fragment);
    if (!filename) {
      page.skipped.push_back("link with an unsafe file name: '" + Abbreviate(*href) + "'");
      return;
    }
    f.filename = std::move(*filename);
    f.url = std::string(no_fragment);
    if (auto hash = ParseHashPair(fragment)) f.hashes.insert(std::move(*hash));
    if (auto rp = tag.Find("data-requires-python")) f.requires_python = std::string(*rp);
    if (auto y = tag.Find("data-yanked")) f.yanked = Yanked{true, std::string(*y)};
    auto metadata = tag.Find("data-core-metadata");
    if (!metadata) metadata = tag.Find("data-dist-info-metadata");
    if (metadata) f.core_metadata = ParseMetadataAttribute(*metadata);
    if (auto sig = tag.Find("data-gpg-sig")) {
      if (*sig == "true") f.gpg_sig = true;
      if (*sig == "false") f.gpg_sig = false;
    }
    page.files.push_back(std::move(f));
  });
  if (!status.ok()) return status;
  return page;
}

Result<ProjectList> ParseIndexHtml(std::string_view html) {
  ProjectList list;
  Status status;
  ScanHtmlTags(html, [&](const HtmlTag& tag) {
    if (tag.name == "meta") {
      auto name = tag.Find("name");
      auto content = tag.Find("content");
      if (name && content && *name == "pypi:repository-version") {
        list.upstream_api_version = std::string(Trim(*content));
        if (!IsSupportedApiVersion(list.upstream_api_version) && status.ok()) {
          status = InvalidArgument("parse PyPI index: unsupported repository version '" +
                                   list.upstream_api_version + "'");
        }
      }
      return;
    }
    if (tag.name != "a") return;
    std::string_view name = Trim(tag.text);
    if (IsValidProjectName(name)) list.names.emplace_back(name);
  });
  if (!status.ok()) return status;
  return list;
}

std::string RenderProjectHtml(const ProjectPage& page) {
  std::string out;
  out.reserve(512 + page.files.size() * 400);
  std::string name = NormalizeName(page.name);
  AppendHeader(out, ApiVersionFor(page), "Links for " + name);
  out.append("    <h1>Links for ");
  AppendHtmlEscaped(out, name);
  out.append("</h1>\n");
  for (const DistFile& f : page.files) {
    out.append("    <a href=\"");
    AppendHtmlEscaped(out, f.url);
    if (auto hash = PreferredHash(f.hashes)) {
      out.push_back('#');
      AppendHtmlEscaped(out, hash->first);
      out.push_back('=');
      AppendHtmlEscaped(out, hash->second);
    }
    out.push_back('"');
    if (f.requires_python) AppendAttribute(out, "data-requires-python", *f.requires_python);
    if (f.yanked.yanked) AppendAttribute(out, "data-yanked", f.yanked.reason);
    if (f.gpg_sig) AppendAttribute(out, "data-gpg-sig", *f.gpg_sig ? "true" : "false");
    if (f.core_metadata.available) {
      std::string value = MetadataAttributeValue(f.core_metadata);
      AppendAttribute(out, "data-dist-info-metadata", value);
      AppendAttribute(out, "data-core-metadata", value);
    }
    out.push_back('>');
    AppendHtmlEscaped(out, f.filename);
    out.append("</a><br />\n");
  }
  out.append(kFooter);
  return out;
}

std::string RenderIndexHtml(const ProjectList& list) {
  std::string out;
  out.reserve(256 + list.names.size() * 64);
  AppendHeader(out, "1.0", "Simple index");
  for (const std::string& name : list.names) {
    out.append("    <a href=\"");
    AppendHtmlEscaped(out, NormalizeName(name));
    out.append("/\">");
    AppendHtmlEscaped(out, name);
    out.append("</a>\n");
  }
  out.append(kFooter);
  return out;
}

}  // namespace ferry::proxy::pypi
