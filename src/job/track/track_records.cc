#include "job/track/track_records.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <fmt/format.h>
#include "base/json_text.h"
#include "base/redact.h"
#include "base/strings.h"

namespace ferry::job::track {

namespace {

using nlohmann::json;

std::optional<std::string> ReadFile(const std::filesystem::path& p) {
  std::ifstream in(p);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsCommitHash(std::string_view s) {
  if (s.size() != 40 && s.size() != 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

}  // namespace

std::string TrackingRecordName(const std::string& rank) {
  return rank.empty() || rank == "0" ? "tracking.json" : "tracking-rank" + rank + ".json";
}

std::string TrackingRecordJson(const TrackingRecord& r) {
  return JsonText(json{{"format", 1},
                       {"tracking_uri", r.url},
                       {"run_id", r.run_id},
                       {"experiment_id", r.experiment_id},
                       {"experiment", r.experiment}}) +
         "\n";
}

std::optional<TrackingRecord> ParseTrackingRecord(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("run_id") || !j["run_id"].is_string()) return std::nullopt;
  return TrackingRecord{.url = j.value("tracking_uri", ""),
                        .run_id = j["run_id"].get<std::string>(),
                        .experiment_id = j.value("experiment_id", ""),
                        .experiment = j.value("experiment", "")};
}

std::string CheckpointsJson(const std::vector<CheckpointSet>& sets, const RunIdentity& id) {
  json outputs = json::array();
  for (const auto& s : sets) {
    std::string dst = s.destination;
    if (!dst.empty() && dst.back() != '/') dst += '/';
    json files = json::array();
    for (const auto& f : s.manifest.files) {
      files.push_back({{"path", f.path},
                       {"url", dst + f.path},
                       {"size", f.size},
                       {"crc32c", f.crc32c ? json(fmt::format("{:08x}", *f.crc32c)) : json()},
                       {"status", f.status}});
    }
    outputs.push_back({{"destination", dst},
                       {"manifest", s.manifest_url},
                       {"synced_at", s.manifest.written_at},
                       {"attempt", s.manifest.attempt},
                       {"state", s.manifest.state},
                       {"final", s.manifest.final},
                       {"files", files}});
  }
  return JsonText(json{{"format", 1},
                       {"run_id", id.job},
                       {"attempt", id.attempt},
                       {"rank", id.rank},
                       {"outputs", outputs}},
                  2) +
         "\n";
}

std::vector<std::pair<std::string, std::string>> RunTags(const RunPlan& plan,
                                                         const std::string& host,
                                                         const std::string& user,
                                                         const std::string& cwd) {
  const std::string command = RedactCommandLine(plan.options.command);
  std::vector<std::pair<std::string, std::string>> tags = {
      {"ferry.host", host},         {"ferry.job", plan.id.job},
      {"ferry.rank", plan.id.rank}, {"ferry.attempt", plan.id.attempt},
      {"ferry.command", command},
  };
  if (!plan.options.command.empty()) {
    tags.emplace_back("mlflow.source.name",
                      std::filesystem::path(plan.options.command[0]).filename().string());
  }
  if (!user.empty()) tags.emplace_back("mlflow.user", user);
  if (auto commit = GitCommit(cwd)) tags.emplace_back("mlflow.source.git.commit", *commit);
  return tags;
}

std::string RedactCommandLine(const std::vector<std::string>& argv) {
  auto secret_name = [](std::string_view name) {
    const std::string n = ToLower(name);
    for (std::string_view w : {"secret", "token", "password", "passwd", "apikey", "api_key",
                               "api-key", "credential", "access_key", "access-key", "private"}) {
      if (n.find(w) != std::string::npos) return true;
    }
    return false;
  };
  std::string out;
  bool hide_next = false;
  for (const auto& a : argv) {
    std::string shown = a;
    const size_t eq = a.find('=');
    if (hide_next) {
      shown = std::string(kRedacted);
    } else if (eq != std::string::npos && eq > 0 && secret_name(a.substr(0, eq))) {
      shown = a.substr(0, eq + 1) + std::string(kRedacted);
    }
    hide_next = StartsWith(a, "-") && eq == std::string::npos && secret_name(a);
    out += (out.empty() ? "" : " ") + shown;
  }
  return Redact(out);
}

std::optional<std::string> GitCommit(const std::string& dir) {
  std::error_code ec;
  const std::filesystem::path start = std::filesystem::absolute(dir, ec);
  if (ec) return std::nullopt;
  for (std::filesystem::path p = start; !p.empty(); p = p.parent_path()) {
    std::filesystem::path git = p / ".git";
    std::filesystem::path gitdir;
    std::error_code dir_ec;
    if (std::filesystem::is_directory(git, dir_ec)) {
      gitdir = git;
    } else if (auto link = ReadFile(git)) {  // "gitdir: PATH" (worktrees, submodules)
      std::string_view l = Trim(*link);
      if (!StartsWith(l, "gitdir:")) return std::nullopt;
      gitdir = std::filesystem::path(std::string(Trim(l.substr(7))));
      if (gitdir.is_relative()) gitdir = p / gitdir;
    } else {
      if (p == p.root_path()) break;
      continue;
    }
    auto head = ReadFile(gitdir / "HEAD");
    if (!head) return std::nullopt;
    std::string h(Trim(*head));
    if (IsCommitHash(h)) return h;  // detached
    if (!StartsWith(h, "ref:")) return std::nullopt;
    std::string ref(Trim(std::string_view(h).substr(4)));
    // A worktree keeps its refs in the common dir.
    std::filesystem::path common = gitdir;
    if (auto c = ReadFile(gitdir / "commondir")) {
      common = std::filesystem::path(std::string(Trim(*c)));
      if (common.is_relative()) common = gitdir / common;
    }
    for (const auto& base : {gitdir, common}) {
      if (auto loose = ReadFile(base / ref)) {
        std::string v(Trim(*loose));
        if (IsCommitHash(v)) return v;
      }
      if (auto packed = ReadFile(base / "packed-refs")) {
        for (auto line : Split(*packed, '\n')) {
          line = Trim(line);
          if (EndsWith(line, " " + ref) && IsCommitHash(line.substr(0, line.find(' ')))) {
            return std::string(line.substr(0, line.find(' ')));
          }
        }
      }
    }
    return std::nullopt;  // an unborn branch
  }
  return std::nullopt;
}

std::string FinalStatus(const ChildState& child, int exit_code) {
  if (exit_code == 0) return "FINISHED";
  if (child.interrupted || StartsWith(child.how, "killed")) return "KILLED";
  return "FAILED";
}

std::string AttemptStartedTag(const std::string& attempt) {
  return "ferry.attempt." + (attempt.empty() ? std::string("0") : attempt) + ".started_ms";
}

std::string OutputLogArtifact(const std::string& attempt) {
  if (attempt.empty() || attempt == "0") return "ferry/output.log";
  return "ferry/output-attempt" + attempt + ".log";
}

}  // namespace ferry::job::track
