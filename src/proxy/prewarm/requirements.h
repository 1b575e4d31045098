#pragma once
// What `ferry serve prewarm -r FILE` reads from a pip requirements file: project names and pinned
// versions. Pure functions, no I/O.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ferry::proxy::prewarm {

struct Requirement {
  std::string project;  // normalized (PEP 503)
  std::string version;  // the `==` pin, "" when unpinned (the newest listed version is used)
  int line = 0;         // 1-based line number in the file, for messages
};

// Parses requirements text: comments (`#` to the end of the line), blank lines, `\` line
// continuations, `--hash=...` and other options after a requirement, extras (`name[a,b]`) and
// environment markers (`; python_version < "3.12"`) are understood and dropped. Option lines
// (`-r other.txt`, `--index-url ...`, `-e path`), URLs and local paths are skipped and listed in
// `skipped` ("line N: ..."), never guessed at.
std::vector<Requirement> ParseRequirements(std::string_view text,
                                           std::vector<std::string>* skipped);

// The version in a distribution's file name: wheels `{name}-{version}(-{build})?-{py}-{abi}-
// {platform}.whl`, sdists `{name}-{version}.tar.gz|.zip`; nullopt for anything else.
std::optional<std::string> VersionOfFilename(std::string_view filename);

}  // namespace ferry::proxy::prewarm
