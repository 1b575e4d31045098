#pragma once
// Which source files `ferry shard pack` takes: --include/--exclude globs and the dotfile rule.
//
// A pattern without '/' is matched against the file's name, one with '/' against its path
// relative to SRC (there '*' also matches '/'); `*`, `?` and `[...]` as in the shell (fnmatch).
// With includes, a file must match one of them; a file matching an exclude is left out.
// Files and directories whose names start with '.' (.DS_Store, ._x.jpg, .git/) are left out
// unless `dotfiles` is set; they are counted apart so the packer can say how many it skipped.

#include <string>
#include <string_view>
#include <vector>

namespace ferry::shard {

struct FileFilter {
  std::vector<std::string> include, exclude;
  bool dotfiles = false;

  enum class Verdict { kTake, kHidden, kExcluded };
  Verdict Check(std::string_view relative_path) const;
};

bool GlobMatch(std::string_view pattern, std::string_view relative_path);

}  // namespace ferry::shard
