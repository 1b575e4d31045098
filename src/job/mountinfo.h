#pragma once
// /proc/self/mountinfo: parsing, finding the mount that holds a path, and classifying it for
// `ferry doctor` (is data written there persistent, and why).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace ferry::job {

struct MountEntry {
  std::string root;           // the mounted directory inside its filesystem ("/" or a subtree)
  std::string mount_point;    // where it is mounted
  std::string options;        // per-mount options (rw, relatime, ...)
  std::string fstype;         // ext4, overlay, tmpfs, nfs4, fuse.s3fs, ...
  std::string source;         // /dev/vda, server:/export, overlay, tmpfs, s3fs, ...
  std::string super_options;  // filesystem options (for NFS: vers, hard/soft, timeo, nconnect)
};

// Parses mountinfo text (octal escapes such as \040 decoded). Malformed lines are skipped.
std::vector<MountEntry> ParseMountInfo(std::string_view text);
Result<std::vector<MountEntry>> ReadMountInfo();

// The mount holding `absolute_path`: the longest mount point that is a path prefix (later
// entries win ties, as mounts stack).
std::optional<MountEntry> FindMount(const std::vector<MountEntry>& mounts,
                                    std::string_view absolute_path);

enum class Persistence {
  kContainer,  // gone when the container exits (overlay writable layer)
  kRam,        // gone on unmount or reboot, counts against memory (tmpfs)
  kPod,        // gone when the pod is deleted (Kubernetes emptyDir)
  kNode,       // survives the container and the pod, but lives on this machine's disk
  kNetwork,    // survives this machine (NFS, CSI/PVC network volumes, object-store FUSE)
  kUnknown,
};

struct MountVerdict {
  std::string kind;  // "overlay (container writable layer)", "NFS", "FUSE (s3fs)", ...
  Persistence persistence = Persistence::kUnknown;
  std::string verdict;             // one sentence for people
  std::vector<std::string> notes;  // details and warnings (soft NFS mounts, FUSE writes, ...)
};

MountVerdict ClassifyMount(const MountEntry& mount);
std::string_view PersistenceName(Persistence p);

}  // namespace ferry::job
