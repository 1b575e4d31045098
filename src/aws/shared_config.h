#pragma once
// The AWS shared config and credentials files (~/.aws/config, ~/.aws/credentials).
//
// Files: AWS_CONFIG_FILE / AWS_SHARED_CREDENTIALS_FILE or the defaults under $HOME/.aws.
// Profile: an explicit name, else AWS_PROFILE, else "default". Sections are "[profile NAME]"
// (or "[default]") in config and "[NAME]" in credentials; credentials-file values win.
// Nested sections ("s3 =" followed by indented "addressing_style = path") become "s3.KEY".

#include <map>
#include <optional>
#include <string>

#include "base/environment.h"
#include "base/status.h"

namespace ferry::aws {

using Profile = std::map<std::string, std::string>;

// Parses INI text into section -> key -> value. Section names are kept as written
// ("profile dev").
std::map<std::string, Profile> ParseIni(std::string_view text);

struct SharedConfig {
  std::string profile_name;
  bool profile_explicit = false;  // named by the caller or AWS_PROFILE
  bool profile_found = false;
  Profile values;                             // merged config + credentials values for the profile
  std::string config_path, credentials_path;  // the files looked at

  std::optional<std::string> Get(const std::string& key) const;
  // kNotFound naming the profile and both files when it was named but is in neither file.
  Status CheckFound() const;
};

// Loads the profile's values from both files. Missing files are not an error; a named profile
// that exists in neither file is reported by the caller that needs it.
SharedConfig LoadSharedConfig(const Environment& env, std::string_view profile = {});

}  // namespace ferry::aws
