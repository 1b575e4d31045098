#include "aws/shared_config.h"

#include <fstream>
#include <sstream>

#include "base/strings.h"

namespace ferry::aws {

std::map<std::string, Profile> ParseIni(std::string_view text) {
  std::map<std::string, Profile> out;
  std::string section;
  std::string nested;  // key of an open nested section ("s3")
  for (std::string_view raw : Split(text, '\n')) {
    bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::string_view line = Trim(raw);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (line.front() == '[' && line.back() == ']') {
      section = std::string(Trim(line.substr(1, line.size() - 2)));
      out[section];
      nested.clear();
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos || section.empty()) continue;
    std::string key = ToLower(Trim(line.substr(0, eq)));
    std::string value(Trim(line.substr(eq + 1)));
    if (indented && !nested.empty()) {
      out[section][nested + "." + key] = value;
      continue;
    }
    nested = value.empty() ? key : std::string();
    if (!value.empty()) out[section][key] = value;
  }
  return out;
}

std::optional<std::string> SharedConfig::Get(const std::string& key) const {
  auto it = values.find(key);
  if (it == values.end() || it->second.empty()) return std::nullopt;
  return it->second;
}

Status SharedConfig::CheckFound() const {
  if (!profile_explicit || profile_found) return Status();
  return NotFound("AWS profile '" + profile_name + "' not found in " + config_path + " or " +
                  credentials_path + " (check the name; AWS_CONFIG_FILE and " +
                  "AWS_SHARED_CREDENTIALS_FILE choose the files)");
}

namespace {
std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

SharedConfig LoadSharedConfig(const Environment& env, std::string_view profile) {
  SharedConfig cfg;
  if (!profile.empty()) {
    cfg.profile_name = std::string(profile);
    cfg.profile_explicit = true;
  } else if (auto p = env.Get("AWS_PROFILE")) {
    cfg.profile_name = *p;
    cfg.profile_explicit = true;
  } else {
    cfg.profile_name = "default";
  }
  std::string home = env.GetOr("HOME", "/root");
  std::string config_path = env.GetOr("AWS_CONFIG_FILE", home + "/.aws/config");
  std::string creds_path = env.GetOr("AWS_SHARED_CREDENTIALS_FILE", home + "/.aws/credentials");
  cfg.config_path = config_path;
  cfg.credentials_path = creds_path;

  if (auto text = ReadFile(config_path)) {
    auto ini = ParseIni(*text);
    std::string section = cfg.profile_name == "default" ? "default" : "profile " + cfg.profile_name;
    auto it = ini.find(section);
    if (it == ini.end() && cfg.profile_name == "default") it = ini.find("profile default");
    if (it != ini.end()) {
      cfg.profile_found = true;
      cfg.values = it->second;
    }
  }
  if (auto text = ReadFile(creds_path)) {
    auto ini = ParseIni(*text);
    if (auto it = ini.find(cfg.profile_name); it != ini.end()) {
      cfg.profile_found = true;
      for (const auto& [k, v] : it->second) cfg.values[k] = v;
    }
  }
  return cfg;
}

}  // namespace ferry::aws
