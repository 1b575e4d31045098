#include "proxy/pypi/simple_json.h"

#include "base/strings.h"
#include "proxy/pypi/json_reader.h"
#include "proxy/pypi/names.h"
#include "proxy/pypi/url.h"
#include "proxy/pypi/wire_values.h"

namespace ferry::proxy::pypi {
namespace {

constexpr int kMaxDepth = 64;

Status Parse(std::string_view text, std::string_view what, JsonDocument& doc) {
  Status status = ParseJson(text, kMaxDepth, doc);
  if (!status.ok()) return status.WithContext("parse " + std::string(what));
  if (!doc.root.is_object()) {
    return InvalidArgument("parse " + std::string(what) + ": not a JSON object");
  }
  return Status();
}

Result<std::string> ApiVersion(const JsonValue& j, std::string_view what) {
  std::string version = "1.0";
  if (const JsonValue* meta = j.Find("meta")) {
    const JsonValue* v = meta->Find("api-version");
    if (v && v->is_string()) version = std::string(v->text);
  }
  if (!IsSupportedApiVersion(version)) {
    return InvalidArgument("parse " + std::string(what) + ": unsupported api-version '" +
                           Abbreviate(version) + "'");
  }
  return version;
}

Hashes ParseHashes(const JsonValue& j) {
  Hashes hashes;
  if (!j.is_object()) return hashes;
  for (const JsonMember& m : j.children) {
    if (!m.value.is_string()) continue;
    if (IsHashName(m.key) && IsHexDigest(m.value.text)) {
      hashes[LowerAscii(m.key)] = LowerAscii(m.value.text);
    }
  }
  return hashes;
}

CoreMetadata ParseMetadata(const JsonValue& j) {
  CoreMetadata m;
  if (j.is_bool()) {
    m.available = j.boolean;
  } else if (j.is_object()) {
    m.available = true;
    m.hashes = ParseHashes(j);
  }
  return m;
}

const std::string_view* StringField(const JsonValue& j, std::string_view key) {
  const JsonValue* v = j.Find(key);
  if (v == nullptr || !v->is_string()) return nullptr;
  return &v->text;
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
  JsonDocument doc;
  FERRY_RETURN_IF_ERROR(Parse(json, what, doc));
  const JsonValue& j = doc.root;
  ProjectPage page;
  FERRY_ASSIGN_OR_RETURN(page.upstream_api_version, ApiVersion(j, what));
  if (auto name = StringField(j, "name")) page.name = std::string(*name);
  const JsonValue* versions = j.Find("versions");
  if (versions && versions->is_array()) {
    page.versions.emplace();
    page.versions->reserve(versions->children.size());
    for (const JsonMember& v : versions->children) {
      if (v.value.is_string()) page.versions->emplace_back(v.value.text);
    }
  }
  const JsonValue* files = j.Find("files");
  if (files == nullptr || !files->is_array()) {
    return InvalidArgument("parse " + what + ": no \"files\" array");
  }
  page.files.reserve(files->children.size());
  for (const JsonMember& item : files->children) {
    const JsonValue& fj = item.value;
    if (!fj.is_object()) continue;
    auto filename = StringField(fj, "filename");
    auto url = StringField(fj, "url");
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
    f.filename = std::string(*filename);
    resolved->resize(SplitFragment(*resolved).first.size());
    f.url = std::move(*resolved);
    if (const JsonValue* h = fj.Find("hashes")) f.hashes = ParseHashes(*h);
    if (auto rp = StringField(fj, "requires-python")) f.requires_python = std::string(*rp);
    const JsonValue* metadata = fj.Find("core-metadata");
    if (!metadata) metadata = fj.Find("dist-info-metadata");
    if (!metadata) metadata = fj.Find("data-dist-info-metadata");  // PyPI's 2023 bug
    if (metadata) f.core_metadata = ParseMetadata(*metadata);
    if (const JsonValue* y = fj.Find("yanked")) {
      if (y->is_bool()) f.yanked.yanked = y->boolean;
      if (y->is_string()) f.yanked = Yanked{true, std::string(y->text)};
    }
    if (const JsonValue* g = fj.Find("gpg-sig"); g && g->is_bool()) f.gpg_sig = g->boolean;
    if (const JsonValue* size = fj.Find("size")) f.size = size->AsUint64();
    if (auto t = StringField(fj, "upload-time")) f.upload_time = std::string(*t);
    page.files.push_back(std::move(f));
  }
  return page;
}

Result<ProjectList> ParseIndexJson(std::string_view json) {
  JsonDocument doc;
  FERRY_RETURN_IF_ERROR(Parse(json, "PyPI index", doc));
  const JsonValue& j = doc.root;
  ProjectList list;
  FERRY_ASSIGN_OR_RETURN(list.upstream_api_version, ApiVersion(j, "PyPI index"));
  const JsonValue* projects = j.Find("projects");
  if (projects == nullptr || !projects->is_array()) {
    return InvalidArgument("parse PyPI index: no \"projects\" array");
  }
  list.names.reserve(projects->children.size());
  for (const JsonMember& p : projects->children) {
    if (auto name = StringField(p.value, "name")) list.names.emplace_back(*name);
  }
  return list;
}

std::string RenderProjectJson(const ProjectPage& page) {
  std::string out;
  out.reserve(256 + page.files.size() * 400);
  out.append("{\"meta\":{\"api-version\":");
  AppendJsonString(out, ApiVersionFor(page));
  out.append("},\"name\":");
  AppendJsonString(out, NormalizeName(page.name));  // PEP 691: the normalized name
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
