#include "proxy/pypi/simple_json.h"

#include <nlohmann/json.hpp>

#include "base/strings.h"
#include "proxy/pypi/url.h"
#include "proxy/pypi/wire_values.h"

namespace ferry::proxy::pypi {
namespace {

using Json = nlohmann::json;

constexpr int kMaxDepth = 64;

// Nesting depth outside strings, so a hostile "[[[[..." is refused before the parser sees it.
bool DepthWithin(std::string_view s, int limit) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (in_string) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > limit) return false;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return true;
}

Result<Json> Parse(std::string_view text, std::string_view what) {
  if (!DepthWithin(text, kMaxDepth)) {
    return InvalidArgument("parse " + std::string(what) + ": nested deeper than 64 levels");
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return InvalidArgument("parse " + std::string(what) + ": not a JSON object");
  }
  return j;
}

Result<std::string> ApiVersion(const Json& j, std::string_view what) {
  std::string version = "1.0";
  auto meta = j.find("meta");
  if (meta != j.end() && meta->is_object()) {
    auto v = meta->find("api-version");
    if (v != meta->end() && v->is_string()) version = v->get<std::string>();
  }
  if (!IsSupportedApiVersion(version)) {
    return InvalidArgument("parse " + std::string(what) + ": unsupported api-version '" +
                           Abbreviate(version) + "'");
  }
  return version;
}

Hashes ParseHashes(const Json& j) {
  Hashes hashes;
  if (!j.is_object()) return hashes;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (!it.value().is_string()) continue;
    const std::string& value = it.value().get_ref<const std::string&>();
    if (IsHashName(it.key()) && IsHexDigest(value))
      hashes[LowerAscii(it.key())] = LowerAscii(value);
  }
  return hashes;
}

CoreMetadata ParseMetadata(const Json& j) {
  CoreMetadata m;
  if (j.is_boolean()) {
    m.available = j.get<bool>();
  } else if (j.is_object()) {
    m.available = true;
    m.hashes = ParseHashes(j);
  }
  return m;
}

const std::string* StringField(const Json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// JSON string writer: escapes quotes, backslashes and control bytes; replaces invalid UTF-8.
void AppendJsonString(std::string& out, std::string_view s) {
  out.push_back('"');
  size_t i = 0;
  while (i < s.size()) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
      size_t j = i + 1;
      while (j < s.size()) {
        unsigned char d = static_cast<unsigned char>(s[j]);
        if (d < 0x20 || d >= 0x80 || d == '"' || d == '\\') break;
        ++j;
      }
      out.append(s.substr(i, j - i));
      i = j;
      continue;
    }
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    if (c < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out.append("\\u00");
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
      ++i;
      continue;
    }
    // A UTF-8 sequence: copy it when well-formed, else U+FFFD for the lead byte.
    size_t len = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
    bool ok = len > 0 && c < 0xF5 && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
      ok = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    }
    if (ok && len >= 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (c == 0xE0 && c1 < 0xA0) ok = false;   // overlong
      if (c == 0xED && c1 >= 0xA0) ok = false;  // surrogate
      if (c == 0xF0 && c1 < 0x90) ok = false;   // overlong
      if (c == 0xF4 && c1 >= 0x90) ok = false;  // > U+10FFFF
    }
    if (ok) {
      out.append(s.substr(i, len));
      i += len;
    } else {
      out.append("\xEF\xBF\xBD");
      ++i;
    }
  }
  out.push_back('"');
}

void AppendHashes(std::string& out, const Hashes& hashes) {
  out.push_back('{');
  bool first = true;
  for (const auto& [name, value] : hashes) {
    if (!first) out.push_back(',');
    first = false;
    AppendJsonString(out, name);
    out.push_back(':');
    AppendJsonString(out, value);
  }
  out.push_back('}');
}

void AppendMetadata(std::string& out, const CoreMetadata& m) {
  if (!m.available) {
    out.append("false");
  } else if (m.hashes.empty()) {
    out.append("true");
  } else {
    AppendHashes(out, m.hashes);
  }
}

}  // namespace

Result<ProjectPage> ParseProjectJson(std::string_view json, std::string_view page_url) {
  if (!ResolveUrl(page_url, "")) {
    return InvalidArgument("parse PyPI project page: '" + std::string(page_url) +
                           "' is not an http(s) URL");
  }
  std::string what = "PyPI project page '" + std::string(page_url) + "'";
  FERRY_ASSIGN_OR_RETURN(Json j, Parse(json, what));
  ProjectPage page;
  FERRY_ASSIGN_OR_RETURN(page.upstream_api_version, ApiVersion(j, what));
  if (const std::string* name = StringField(j, "name")) page.name = *name;
  auto versions = j.find("versions");
  if (versions != j.end() && versions->is_array()) {
    page.versions.emplace();
    for (const Json& v : *versions) {
      if (v.is_string()) page.versions->push_back(v.get<std::string>());
    }
  }
  auto files = j.find("files");
  if (files == j.end() || !files->is_array()) {
    return InvalidArgument("parse " + what + ": no \"files\" array");
  }
  page.files.reserve(files->size());
  for (const Json& fj : *files) {
    if (!fj.is_object()) continue;
    const std::string* filename = StringField(fj, "filename");
    const std::string* url = StringField(fj, "url");
    if (!filename || !IsSafeFilename(*filename)) {
      page.skipped.push_back("file with a missing or unsafe filename: '" +
                             Abbreviate(filename ? *filename : "") + "'");
      continue;
    }
    std::optional<std::string> resolved = url ? ResolveUrl(page_url, *url) : std::nullopt;
    if (!resolved) {
      page.skipped.push_back("file '" + Abbreviate(*filename) + "' with a non-http(s) url");
      continue;
    }
    DistFile f;
    f.filename = *filename;
    f.url = std::string(SplitFragment(*resolved).first);
    if (auto h = fj.find("hashes"); h != fj.end()) f.hashes = ParseHashes(*h);
    if (const std::string* rp = StringField(fj, "requires-python")) f.requires_python = *rp;
    auto metadata = fj.find("core-metadata");
    if (metadata == fj.end()) metadata = fj.find("dist-info-metadata");
    if (metadata == fj.end()) metadata = fj.find("data-dist-info-metadata");  // PyPI's 2023 bug
    if (metadata != fj.end()) f.core_metadata = ParseMetadata(*metadata);
    if (auto y = fj.find("yanked"); y != fj.end()) {
      if (y->is_boolean()) f.yanked.yanked = y->get<bool>();
      if (y->is_string()) f.yanked = Yanked{true, y->get<std::string>()};
    }
    if (auto g = fj.find("gpg-sig"); g != fj.end() && g->is_boolean()) f.gpg_sig = g->get<bool>();
    if (auto s = fj.find("size"); s != fj.end() && s->is_number_unsigned()) {
      f.size = s->get<uint64_t>();
    }
    if (const std::string* t = StringField(fj, "upload-time")) f.upload_time = *t;
    page.files.push_back(std::move(f));
  }
  return page;
}

Result<ProjectList> ParseIndexJson(std::string_view json) {
  FERRY_ASSIGN_OR_RETURN(Json j, Parse(json, "PyPI index"));
  ProjectList list;
  FERRY_ASSIGN_OR_RETURN(list.upstream_api_version, ApiVersion(j, "PyPI index"));
  auto projects = j.find("projects");
  if (projects == j.end() || !projects->is_array()) {
    return InvalidArgument("parse PyPI index: no \"projects\" array");
  }
  list.names.reserve(projects->size());
  for (const Json& p : *projects) {
    if (!p.is_object()) continue;
    if (const std::string* name = StringField(p, "name")) list.names.push_back(*name);
  }
  return list;
}

std::string RenderProjectJson(const ProjectPage& page) {
  std::string out;
  out.reserve(256 + page.files.size() * 400);
  out.append("{\"meta\":{\"api-version\":");
  AppendJsonString(out, ApiVersionFor(page));
  out.append("},\"name\":");
  AppendJsonString(out, page.name);
  if (page.versions) {
    out.append(",\"versions\":[");
    for (size_t i = 0; i < page.versions->size(); ++i) {
      if (i) out.push_back(',');
      AppendJsonString(out, (*page.versions)[i]);
    }
    out.push_back(']');
  }
  out.append(",\"files\":[");
  for (size_t i = 0; i < page.files.size(); ++i) {
    const DistFile& f = page.files[i];
    if (i) out.push_back(',');
    out.append("{\"filename\":");
    AppendJsonString(out, f.filename);
    out.append(",\"url\":");
    AppendJsonString(out, f.url);
    out.append(",\"hashes\":");
    AppendHashes(out, f.hashes);
    if (f.requires_python) {
      out.append(",\"requires-python\":");
      AppendJsonString(out, *f.requires_python);
    }
    out.append(",\"yanked\":");
    if (!f.yanked.yanked) {
      out.append("false");
    } else if (f.yanked.reason.empty()) {
      out.append("true");
    } else {
      AppendJsonString(out, f.yanked.reason);
    }
    out.append(",\"core-metadata\":");
    AppendMetadata(out, f.core_metadata);
    if (f.gpg_sig) out.append(*f.gpg_sig ? ",\"gpg-sig\":true" : ",\"gpg-sig\":false");
    if (f.size) {
      out.append(",\"size\":");
      out.append(std::to_string(*f.size));
    }
    if (f.upload_time) {
      out.append(",\"upload-time\":");
      AppendJsonString(out, *f.upload_time);
    }
    out.push_back('}');
  }
  out.append("]}");
  return out;
}

std::string RenderIndexJson(const ProjectList& list) {
  std::string out;
  out.reserve(64 + list.names.size() * 40);
  out.append("{\"meta\":{\"api-version\":\"1.0\"},\"projects\":[");
  for (size_t i = 0; i < list.names.size(); ++i) {
    if (i) out.push_back(',');
    out.append("{\"name\":");
    AppendJsonString(out, list.names[i]);
    out.push_back('}');
  }
  out.append("]}");
  return out;
}

}  // namespace ferry::proxy::pypi
