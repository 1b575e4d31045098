#include "tracker/client/spool_sync.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "base/status.h"

namespace ferry::tracker::client {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

Result<std::string> ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("cannot read '" + path.string() + "'");
  std::ostringstream out;
  out << in.rdbuf();
  if (in.bad()) return Status(StatusCode::kInternal, "reading '" + path.string() + "' failed");
  return out.str();
}

Status WriteAtomically(const fs::path& path, const std::string& text) {
  fs::path tmp = path;
  tmp += ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) return Status(StatusCode::kInternal, "writing '" + tmp.string() + "' failed");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) return Status(StatusCode::kInternal, "renaming '" + tmp.string() + "': " + ec.message());
  return Status();
}

Result<json> ParseJson(const std::string& text, const fs::path& where) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    return InvalidArgument("'" + where.string() + "' is not JSON: " + e.what());
  }
}

// ferry.track's metric values: numbers, or "NaN", "Infinity", "-Infinity".
Result<double> ValueOf(const json& v, const fs::path& where) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return InvalidArgument("'" + where.string() +
                         "' holds a value that is not a number: " + v.dump().substr(0, 80));
}

Result<std::vector<MetricPoint>> ReadBatch(const fs::path& path) {
  FERRY_ASSIGN_OR_RETURN(std::string text, ReadAll(path));
  std::vector<MetricPoint> points;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    FERRY_ASSIGN_OR_RETURN(json p, ParseJson(line, path));
    if (!p.is_object() || !p.contains("k") || !p["k"].is_string() || !p.contains("v") ||
        !p.contains("t") || !p["t"].is_number_integer() || !p.contains("s") ||
        !p["s"].is_number_integer()) {
      return InvalidArgument("'" + path.string() + "' has a line that is not a point {k, v, t, s}");
    }
    FERRY_ASSIGN_OR_RETURN(double value, ValueOf(p["v"], path));
    points.push_back(
        {p["k"].get<std::string>(), value, p["t"].get<int64_t>(), p["s"].get<int64_t>()});
  }
  return points;
}

// Python's repr() of the summary value, as ferry.track writes summary.<key> tags.
std::string SummaryText(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  json j = v;  // shortest round-trip form, as repr()
  std::string s = j.dump();
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

// `call` until it succeeds, a permanent error, or `options.retry_for` has passed.
Status Retry(const SpoolSyncOptions& options, const std::string& what,
             const std::function<Status()>& call) {
  auto deadline = std::chrono::steady_clock::now() + options.retry_for;
  auto delay = std::chrono::milliseconds(250);
  bool said = false;
  while (true) {
    Status s = call();
    if (s.ok() || !IsRetryable(s) || std::chrono::steady_clock::now() + delay > deadline) {
      return s.ok() ? s : s.WithContext(what);
    }
    if (!said && options.note) {
      options.note(what + ": " + s.message() + "; retrying with backoff");
      said = true;
    }
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, std::chrono::milliseconds(5000));
  }
}

// batch-* and image-*.bin files, oldest first (the sequence number after the dash).
std::vector<fs::path> Pending(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    const bool batch = name.starts_with("batch-") && name.ends_with(".jsonl");
    const bool image = name.starts_with("image-") && name.ends_with(".bin");
    if (batch || image) out.push_back(e.path());
  }
  auto seq = [](const fs::path& p) {
    std::string stem = p.stem().string();
    return stem.substr(stem.find('-') + 1);
  };
  std::sort(out.begin(), out.end(),
            [&](const fs::path& a, const fs::path& b) { return seq(a) < seq(b); });
  return out;
}

std::vector<std::pair<std::string, std::string>> Pairs(const json& object) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!object.is_object()) return out;
  for (const auto& [k, v] : object.items()) {
    out.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

}  // namespace

Result<std::vector<fs::path>> SpoolRunDirs(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir / "meta.json", ec)) return std::vector<fs::path>{dir};
  std::vector<fs::path> out;
  if (fs::is_directory(dir, ec)) {
    for (const auto& e : fs::directory_iterator(dir, ec)) {
      if (fs::exists(e.path() / "meta.json", ec)) out.push_back(e.path());
    }
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    return NotFound("'" + dir.string() + "' holds no spooled run (no meta.json in it or below)");
  }
  return out;
}

Result<std::string> SyncSpool(MlflowClient& client, const fs::path& run_dir,
                              const SpoolSyncOptions& options) {
  const fs::path meta_path = run_dir / "meta.json";
  FERRY_ASSIGN_OR_RETURN(std::string meta_text, ReadAll(meta_path));
  FERRY_ASSIGN_OR_RETURN(json meta, ParseJson(meta_text, meta_path));
  if (!meta.is_object()) return InvalidArgument("'" + meta_path.string() + "' is not an object");
  std::string run_id =
      meta.value("run_id", json()).is_string() ? meta["run_id"].get<std::string>() : "";
  if (run_id.empty()) {
    if (!meta.contains("project") || !meta["project"].is_string()) {
      return InvalidArgument("'" + meta_path.string() + "' names no project");
    }
    std::string experiment_id;
    FERRY_RETURN_IF_ERROR(Retry(options, "find or create the experiment", [&]() -> Status {
      FERRY_ASSIGN_OR_RETURN(experiment_id,
                             client.GetOrCreateExperiment(meta["project"].get<std::string>()));
      return Status();
    }));
    const std::string name =
        meta.value("name", json()).is_string() ? meta["name"].get<std::string>() : "";
    const int64_t start = meta.value("start_time", json(0)).is_number_integer()
                              ? meta["start_time"].get<int64_t>()
                              : 0;
    FERRY_RETURN_IF_ERROR(Retry(options, "create the run", [&]() -> Status {
      FERRY_ASSIGN_OR_RETURN(RunInfo info,
                             client.CreateRun(experiment_id, name, start, Pairs(meta["tags"])));
      run_id = info.run_id;
      return Status();
    }));
    meta["run_id"] = run_id;  // a second sync after a failure reuses the run
    FERRY_RETURN_IF_ERROR(WriteAtomically(meta_path, meta.dump(1)));
  }
  // ferry.track logs params from its sender thread: a run it created may not have them yet.
  auto params = Pairs(meta.value("config", json::object()));
  const json sent = meta.value("params_sent", json());
  if (!params.empty() && !(sent.is_boolean() && sent.get<bool>())) {
    FERRY_RETURN_IF_ERROR(
        Retry(options, "log params", [&] { return client.LogParams(run_id, params); }));
    meta["params_sent"] = true;
    FERRY_RETURN_IF_ERROR(WriteAtomically(meta_path, meta.dump(1)));
  }
  std::string artifact_uri;
  for (const fs::path& path : Pending(run_dir)) {
    const std::string file = path.filename().string();
    if (path.extension() == ".bin") {
      if (artifact_uri.empty()) {
        FERRY_RETURN_IF_ERROR(Retry(options, "get the run", [&]() -> Status {
          FERRY_ASSIGN_OR_RETURN(RunInfo info, client.GetRun(run_id));
          artifact_uri = info.artifact_uri;
          return Status();
        }));
      }
      fs::path name_file = path;
      name_file.replace_extension(".name");
      FERRY_ASSIGN_OR_RETURN(std::string name, ReadAll(name_file));
      FERRY_ASSIGN_OR_RETURN(std::string data, ReadAll(path));
      FERRY_RETURN_IF_ERROR(Retry(options, "upload " + file,
                                  [&] { return client.UploadArtifact(artifact_uri, name, data); }));
      fs::remove(path);
      fs::remove(name_file);
      continue;
    }
    FERRY_ASSIGN_OR_RETURN(auto points, ReadBatch(path));
    FERRY_RETURN_IF_ERROR(
        Retry(options, "send " + file, [&] { return client.LogMetrics(run_id, points); }));
    fs::remove(path);
  }
  if (meta.value("status", json()).is_string()) {
    std::vector<std::pair<std::string, std::string>> tags;
    const json summary = meta.value("summary", json::object());  // kept alive for items()
    for (const auto& [k, v] : summary.items()) {
      if (v.is_number_integer()) {
        tags.emplace_back("summary." + k, v.dump());  // repr() of a Python int
        continue;
      }
      auto value = ValueOf(v, meta_path);
      if (value.ok()) tags.emplace_back("summary." + k, SummaryText(*value));
    }
    const bool attached = meta.value("attached", false);
    if (!attached && meta.value("exit_code", json()).is_number_integer()) {
      tags.emplace_back("ferry.exit_code", std::to_string(meta["exit_code"].get<int64_t>()));
    }
    for (const auto& [k, v] : tags) {
      FERRY_RETURN_IF_ERROR(
          Retry(options, "set tag " + k, [&] { return client.SetTag(run_id, k, v); }));
    }
    if (!attached) {
      const int64_t end =
          meta.value("end_time", json(0)).is_number_integer() ? meta["end_time"].get<int64_t>() : 0;
      const std::string status = meta["status"].get<std::string>();
      FERRY_RETURN_IF_ERROR(
          Retry(options, "finish the run", [&] { return client.UpdateRun(run_id, status, end); }));
    }
    bool left = !Pending(run_dir).empty();
    for (const auto& e : fs::directory_iterator(run_dir)) {
      if (e.path().extension() == ".rejected") left = true;
    }
    if (!left) fs::remove_all(run_dir);
  }
  return run_id;
}

}  // namespace ferry::tracker::client
