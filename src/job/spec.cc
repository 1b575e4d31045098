#include "job/spec.h"

#include <yaml-cpp/yaml.h>

#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

namespace ferry::job {

namespace {

// yaml-cpp reports problems by throwing; this file turns each into a Status naming the key.
class SpecReader {
 public:
  explicit SpecReader(std::string_view name) : name_(name) {}

  Status Error(const std::string& what) const {
    return InvalidArgument("job spec '" + name_ + "': " + what);
  }

  // A scalar or a list of scalars.
  Result<std::vector<std::string>> Strings(const YAML::Node& node, const std::string& key) const {
    std::vector<std::string> out;
    if (node.IsScalar()) {
      out.push_back(node.as<std::string>());
    } else if (node.IsSequence()) {
      for (const auto& item : node) {
        if (!item.IsScalar()) return Error("'" + key + "' must hold strings");
        out.push_back(item.as<std::string>());
      }
    } else {
      return Error("'" + key + "' must be a string or a list of strings");
    }
    return out;
  }

  // A list of {a: ..., b: ...} maps or "A=B" strings (split at the first or last '=').
  Result<std::vector<std::pair<std::string, std::string>>> Pairs(const YAML::Node& node,
                                                                 const std::string& key,
                                                                 const char* a, const char* b,
                                                                 bool split_last) const {
    if (!node.IsSequence()) return Error("'" + key + "' must be a list");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& item : node) {
      if (item.IsScalar()) {
        std::string text = item.as<std::string>();
        size_t eq = split_last ? text.rfind('=') : text.find('=');
        if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
          return Error("'" + key + "' entry '" + text + "' must be " +
                       (split_last ? std::string("SRC=DIR") : std::string("DIR=DST")));
        }
        out.emplace_back(text.substr(0, eq), text.substr(eq + 1));
        continue;
      }
      if (!item.IsMap()) return Error("'" + key + "' entries must be maps or strings");
      for (const auto& kv : item) {
        auto k = kv.first.as<std::string>();
        if (k != a && k != b) return Error("'" + key + "' entry has unknown key '" + k + "'");
      }
      if (!item[a] || !item[b] || !item[a].IsScalar() || !item[b].IsScalar()) {
        return Error("'" + key + "' entries need '" + a + "' and '" + b + "'");
      }
      out.emplace_back(item[a].as<std::string>(), item[b].as<std::string>());
    }
    return out;
  }

  Result<RunOptions> Read(const YAML::Node& root) const {
    if (!root.IsMap()) return Error("the top level must be a mapping of settings");
    RunOptions o;
    static const std::set<std::string> kKnown = {
        "command",      "inputs",       "outputs",      "interval",
        "grace",        "strict",       "preflight",    "delete_after_upload",
        "trigger_file", "follow_links", "signal_group", "resume",
        "job",          "track"};
    for (const auto& kv : root) {
      auto key = kv.first.as<std::string>();
      if (!kKnown.contains(key)) {
        return Error(
            "unknown key '" + key +
            "' (known: command inputs outputs interval grace strict preflight "
            "delete_after_upload trigger_file follow_links signal_group resume job track)");
      }
    }
    if (auto n = root["command"]) {
      FERRY_ASSIGN_OR_RETURN(o.command, Strings(n, "command"));
      if (n.IsScalar()) o.command = {"/bin/sh", "-c", o.command[0]};
    }
    if (auto n = root["inputs"]) {
      FERRY_ASSIGN_OR_RETURN(o.inputs, Pairs(n, "inputs", "src", "dir", true));
    }
    if (auto n = root["outputs"]) {
      FERRY_ASSIGN_OR_RETURN(o.outputs, Pairs(n, "outputs", "dir", "dst", false));
    }
    if (auto n = root["interval"]) {
      int s = n.as<int>();
      if (s < 1) return Error("'interval' must be >= 1 second");
      o.interval = std::chrono::seconds(s);
    }
    if (auto n = root["grace"]) {
      int s = n.as<int>();
      if (s < 0) return Error("'grace' must be >= 0 seconds");
      o.grace = std::chrono::seconds(s);
    }
    if (auto n = root["strict"]) o.strict = n.as<bool>();
    if (auto n = root["follow_links"]) o.follow_symlinks = n.as<bool>();
    if (auto n = root["signal_group"]) o.signal_group = n.as<bool>();
    if (auto n = root["preflight"]) o.skip_preflight = !n.as<bool>();
    if (auto n = root["delete_after_upload"]) {
      FERRY_ASSIGN_OR_RETURN(o.delete_after_upload, Strings(n, "delete_after_upload"));
    }
    if (auto n = root["trigger_file"]) o.trigger_file = n.as<std::string>();
    if (auto n = root["resume"]) o.resume_dir = n.as<std::string>();
    if (auto n = root["job"]) o.job = n.as<std::string>();
    if (auto n = root["track"]) {
      if (n.IsScalar()) {
        o.track.url = n.as<std::string>();
      } else if (n.IsMap()) {
        for (const auto& kv : n) {
          auto k = kv.first.as<std::string>();
          if (k == "url") {
            o.track.url = kv.second.as<std::string>();
          } else if (k == "experiment") {
            o.track.experiment = kv.second.as<std::string>();
          } else if (k == "run_name") {
            o.track.run_name = kv.second.as<std::string>();
          } else if (k == "system_metrics_interval") {
            int s = kv.second.as<int>();
            if (s < 0) return Error("'track.system_metrics_interval' must be >= 0 (0 = off)");
            o.track.system_metrics_interval = s;
          } else {
            return Error("'track' has unknown key '" + k +
                         "' (known: url experiment run_name system_metrics_interval)");
          }
        }
        if (o.track.url.empty()) return Error("'track' needs 'url'");
      } else {
        return Error("'track' must be a URL or a mapping with 'url'");
      }
    }
    return o;
  }

 private:
  std::string name_;
};

}  // namespace

Result<RunOptions> ParseJobSpec(std::string_view text, std::string_view name) {
  SpecReader reader(name);
  try {
    return reader.Read(YAML::Load(std::string(text)));
  } catch (const YAML::Exception& e) {
    // e.mark is 0-based; "line 3, column 5: bad conversion" names the spot.
    std::string where = e.mark.is_null() ? std::string()
                                         : "line " + std::to_string(e.mark.line + 1) + ", column " +
                                               std::to_string(e.mark.column + 1) + ": ";
    return reader.Error(where + e.msg);
  }
}

Result<RunOptions> LoadJobSpec(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("job spec '" + path + "': cannot open: " + std::strerror(errno));
  std::stringstream text;
  text << in.rdbuf();
  return ParseJobSpec(text.str(), path);
}

}  // namespace ferry::job
