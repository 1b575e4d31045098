#pragma once
// The libfuse3 low-level adapter: each FUSE request becomes one MountFs call (fs.h) and its
// reply. The only file that includes libfuse.

#include <functional>
#include <memory>
#include <string>

#include "mount/fs.h"

namespace ferry::mount {

struct FuseOptions {
  std::string mountpoint;
  std::string fsname;  // shown in /proc/mounts as the source ("ferry:s3://bucket/prefix")
  bool foreground = false;
  bool allow_other = false;
  bool read_only = false;
  double ttl_seconds = 60;  // kernel attribute and entry cache
  std::string log_file;     // the daemon's log (stderr is gone after daemonizing); "" = none
};

// Mounts, daemonizes (unless foreground), then builds the filesystem with `make` (after the
// fork, so its threads live in the daemon) and serves requests until unmounted or signalled.
// Returns the process exit code; errors before the mount is up are printed to stderr.
int ServeFuse(const FuseOptions& options, const std::function<std::unique_ptr<MountFs>()>& make);

}  // namespace ferry::mount
