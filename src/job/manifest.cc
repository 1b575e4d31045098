#include "job/manifest.h"

#include <nlohmann/json.hpp>

#include "base/crc32c.h"
#include "base/json_text.h"
#include "base/redact.h"
#include "base/strings.h"

#ifndef FERRY_VERSION
#define FERRY_VERSION "dev"
#endif

namespace ferry::job {

namespace {

// Manifests before format 2 listed the destination (every object under it) with etags.
constexpr int kManifestFormat = 2;

nlohmann::json FileJson(const ManifestFile& f) {
  nlohmann::json j = {
      {"path", f.path},
      {"size", f.size},
      {"crc32c", f.crc32c ? nlohmann::json(Crc32cHex(*f.crc32c)) : nlohmann::json(nullptr)},
      {"status", f.status}};
  // A name that is not UTF-8 reads with U+FFFD in "path"; the exact bytes are in "path_bytes".
  if (!IsUtf8(f.path)) j["path_bytes"] = PercentEncode(f.path, /*keep_slash=*/true);
  return j;
}

void AddExit(nlohmann::json& j, const ChildState& child) {
  j["state"] = ManifestState(child);
  if (!child.running && child.exit_code >= 0) {
    j["exit_code"] = child.exit_code;
    j["exit"] = child.how;
  }
}

}  // namespace

std::string ManifestState(const ChildState& child) {
  if (child.running) return "running";
  if (child.interrupted) return "interrupted";
  if (child.exit_code == 0) return "succeeded";
  if (child.exit_code > 128 && child.how.rfind("killed", 0) == 0) return "killed";
  return "failed";
}

std::string ManifestJson(const ManifestContents& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files) files.push_back(FileJson(f));
  nlohmann::json skipped = nlohmann::json::array();
  for (const auto& f : m.skipped) skipped.push_back({{"path", f.path}, {"reason", f.reason}});
  nlohmann::json left_out = nlohmann::json::array();
  for (const auto& e : m.left_out) {
    left_out.push_back({{"path", e.path}, {"reason", e.reason}, {"target", e.target}});
  }
  std::string command;
  for (const auto& a : m.options.command) command += (command.empty() ? "" : " ") + a;
  nlohmann::json j = {{"format", kManifestFormat},
                      {"run_id", m.id.job},
                      {"attempt", m.id.attempt},
                      {"rank", m.id.rank},
                      {"host", m.id.host},
                      {"ferry_version", FERRY_VERSION},
                      {"command", Redact(command)},
                      {"written_at", m.written_at},
                      {"final", m.final_sync},
                      {"files", std::move(files)},
                      {"skipped", std::move(skipped)},
                      {"left_out", std::move(left_out)},
                      {"resumed_from", nullptr}};
  AddExit(j, m.child);
  if (m.resumed_from) {
    const ResumeSource& r = *m.resumed_from;
    j["resumed_from"] = {{"run_id", r.run_id},
                         {"attempt", r.attempt},
                         {"manifest", r.manifest_url},
                         {"written_at", r.written_at},
                         {"files", r.files.size()}};
  }
  return JsonText(j, 2) + "\n";
}

std::string PointerJson(const std::string& url, const std::string& manifest_url,
                        const RunIdentity& id, const ChildState& child, bool final_sync,
                        const std::string& written_at) {
  nlohmann::json j = {{"url", url},
                      {"manifest", manifest_url},
                      {"run_id", id.job},
                      {"attempt", id.attempt},
                      {"rank", id.rank},
                      {"final", final_sync},
                      {"written_at", written_at}};
  AddExit(j, child);
  return JsonText(j, 2) + "\n";
}

Result<std::string> PointerManifest(const std::string& text, const std::string& where) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("manifest") || !j["manifest"].is_string()) {
    return Status(StatusCode::kDataLoss, "'" + where + "' is not a ferry latest pointer");
  }
  return j["manifest"].get<std::string>();
}

std::optional<std::pair<std::string, std::string>> ManifestOwner(const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("run_id") || !j["run_id"].is_string()) return std::nullopt;
  std::string attempt =
      j.contains("attempt") && j["attempt"].is_string() ? j["attempt"].get<std::string>() : "";
  return std::pair{j["run_id"].get<std::string>(), attempt};
}

Result<ResumeSource> ParseManifest(const std::string& text, const std::string& where) {
  auto bad = [&](const std::string& why) {
    return Status(StatusCode::kDataLoss, "manifest '" + where + "': " + why);
  };
  auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return bad("not JSON");
  if (j.value("format", 1) < kManifestFormat) {
    return bad("written by an older ferry (it lists the destination, not a checkpoint set)");
  }
  if (!j.contains("files") || !j["files"].is_array()) return bad("no 'files' list");
  ResumeSource r;
  r.manifest_url = where;
  r.run_id = j.value("run_id", "");
  r.attempt = j.value("attempt", "");
  r.written_at = j.value("written_at", "");
  r.state = j.value("state", "");
  r.final = j.value("final", false);
  for (const auto& f : j["files"]) {
    if (!f.is_object() || !f.contains("path") || !f["path"].is_string() || !f.contains("size") ||
        !f["size"].is_number_unsigned()) {
      return bad("a 'files' entry without path and size");
    }
    std::optional<std::string> exact;
    if (f.contains("path_bytes")) {
      if (f["path_bytes"].is_string()) exact = PercentDecode(f["path_bytes"].get<std::string>());
      if (!exact) return bad("a malformed 'path_bytes'");
    }
    ManifestFile mf{.path = exact ? *exact : f["path"].get<std::string>(),
                    .size = f["size"].get<uint64_t>(),
                    .crc32c = std::nullopt,
                    .status = f.value("status", "")};
    if (f.contains("crc32c") && f["crc32c"].is_string()) {
      uint32_t crc = 0;
      if (!ParseCrc32cHex(f["crc32c"].get<std::string>(), &crc)) {
        return bad("'" + mf.path + "' has a malformed crc32c");
      }
      mf.crc32c = crc;
    }
    // Paths come from another run's file: nothing may lead out of the resume directory.
    if (mf.path.empty() || mf.path.front() == '/' || mf.path.find('\0') != std::string::npos ||
        mf.path == ".." || mf.path.rfind("../", 0) == 0 ||
        mf.path.find("/../") != std::string::npos ||
        (mf.path.size() >= 3 && mf.path.compare(mf.path.size() - 3, 3, "/..") == 0)) {
      return bad("unsafe path '" + mf.path + "'");
    }
    r.files.push_back(std::move(mf));
  }
  return r;
}

}  // namespace ferry::job
