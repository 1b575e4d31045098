#include "job/mountinfo.h"

#include <fstream>
#include <sstream>

#include "base/errno_status.h"
#include "base/strings.h"

namespace ferry::job {

namespace {

std::string Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto oct = [](char c) { return c >= '0' && c <= '7'; };
    if (s[i] == '\\' && i + 3 < s.size()) {
      if (oct(s[i + 1]) && oct(s[i + 2]) && oct(s[i + 3])) {
        out.push_back(
            static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

bool HasOption(const std::string& options, std::string_view name) {
  for (auto o : Split(options, ',')) {
    if (o == name || StartsWith(o, std::string(name) + "=")) return true;
  }
  return false;
}

std::string OptionValue(const std::string& options, std::string_view name) {
  for (auto o : Split(options, ',')) {
    if (StartsWith(o, std::string(name) + "=")) return std::string(o.substr(name.size() + 1));
  }
  return "";
}

}  // namespace

std::vector<MountEntry> ParseMountInfo(std::string_view text) {
  std::vector<MountEntry> out;
  for (auto line : Split(text, '\n')) {
    std::vector<std::string_view> f;
    for (auto w : Split(line, ' ')) {
      if (!w.empty()) f.push_back(w);
    }
    size_t dash = 0;
    for (size_t i = 6; i < f.size(); ++i) {
      if (f[i] == "-") {
        dash = i;
        break;
      }
    }
    if (dash == 0 || dash + 3 > f.size()) continue;
    out.push_back({.root = Unescape(f[3]),
                   .mount_point = Unescape(f[4]),
                   .options = std::string(f[5]),
                   .fstype = std::string(f[dash + 1]),
                   .source = Unescape(f[dash + 2]),
                   .super_options = dash + 3 < f.size() ? std::string(f[dash + 3]) : ""});
  }
  return out;
}

Result<std::vector<MountEntry>> ReadMountInfo() {
  std::ifstream in("/proc/self/mountinfo");
  if (!in) return ErrnoToStatus(errno, "read /proc/self/mountinfo");
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseMountInfo(ss.str());
}

std::optional<MountEntry> FindMount(const std::vector<MountEntry>& mounts, std::string_view path) {
  std::optional<MountEntry> best;
  for (const auto& m : mounts) {
    std::string_view mp = m.mount_point;
    bool under = mp == "/" || path == mp ||
                 (StartsWith(path, mp) && path.size() > mp.size() && path[mp.size()] == '/');
    if (under && (!best || mp.size() >= best->mount_point.size())) best = m;
  }
  return best;
}

std::string_view PersistenceName(Persistence p) {
  switch (p) {
    case Persistence::kContainer:
      return "container";
    case Persistence::kRam:
      return "ram";
    case Persistence::kPod:
      return "pod";
    case Persistence::kNode:
      return "node";
    case Persistence::kNetwork:
      return "network";
    case Persistence::kUnknown:
      return "unknown";
  }
  return "unknown";
}

MountVerdict ClassifyMount(const MountEntry& m) {
  MountVerdict v;
  const std::string& t = m.fstype;
  bool empty_dir = m.root.find("kubernetes.io~empty-dir") != std::string::npos ||
                   m.source.find("kubernetes.io~empty-dir") != std::string::npos;
  bool csi = m.root.find("kubernetes.io~csi") != std::string::npos ||
             m.root.find("/volumes/kubernetes.io~") != std::string::npos;
  if (t == "overlay" || t == "aufs") {
    v.kind = "overlay (container writable layer)";
    v.persistence = Persistence::kContainer;
    v.verdict =
        "data here is lost when the container exits; write checkpoints to a mounted volume or "
        "stage them out";
  } else if (t == "tmpfs" || t == "ramfs") {
    v.kind = empty_dir ? "Kubernetes emptyDir (medium: Memory)" : "tmpfs (RAM)";
    v.persistence = empty_dir ? Persistence::kPod : Persistence::kRam;
    v.verdict =
        empty_dir
            ? "data lives in RAM until the pod is deleted, and counts against its memory limit"
            : "data lives in RAM and is lost on unmount or reboot";
  } else if (StartsWith(t, "nfs")) {
    v.kind = "NFS (" + t + ")";
    v.persistence = Persistence::kNetwork;
    v.verdict = "network storage: data survives the container, the pod and this machine";
    v.notes.push_back("server: " + m.source);
    std::string opts = m.super_options + "," + m.options;
    if (HasOption(opts, "soft")) {
      v.notes.push_back(
          "mounted 'soft': I/O errors instead of waiting when the server is slow; "
          "checkpoint writes can fail silently in apps that ignore errors (prefer 'hard')");
    } else {
      v.notes.push_back("mounted 'hard': I/O waits while the server is away");
    }
    for (const char* k : {"vers", "timeo", "retrans", "nconnect", "rsize", "wsize"}) {
      if (auto val = OptionValue(opts, k); !val.empty())
        v.notes.push_back(std::string(k) + "=" + val);
    }
    if (OptionValue(opts, "nconnect").empty()) {
      v.notes.push_back("no nconnect: one TCP connection; nconnect=8 often multiplies throughput");
    }
  } else if (StartsWith(t, "fuse")) {
    std::string driver = t.size() > 5 ? t.substr(5) : m.source;
    v.kind = "FUSE (" + driver + ")";
    bool object_store = driver.find("s3") != std::string::npos || driver == "rclone" ||
                        driver.find("mountpoint") != std::string::npos || driver == "ferry" ||
                        driver.find("goofys") != std::string::npos ||
                        driver.find("gcsfuse") != std::string::npos;
    v.persistence = object_store ? Persistence::kNetwork : Persistence::kUnknown;
    v.verdict = object_store
                    ? "an object store seen as files: data persists once the driver has uploaded it"
                    : "a user-space filesystem; persistence depends on its driver";
    if (object_store) {
      v.notes.push_back(
          "writes are durable only after close()/fsync() returns, and only if the "
          "driver supports the write pattern (no random writes or renames on most)");
    }
  } else if (empty_dir) {
    v.kind = "Kubernetes emptyDir (node disk)";
    v.persistence = Persistence::kPod;
    v.verdict = "data survives container restarts but is deleted with the pod";
  } else if (csi) {
    v.kind = "Kubernetes volume (PVC/CSI)";
    v.persistence = Persistence::kNetwork;
    v.verdict = "a persistent volume: data survives the pod (node-local if it is a local PV)";
  } else if (StartsWith(m.source, "/dev/") || t == "ext4" || t == "xfs" || t == "btrfs" ||
             t == "zfs") {
    v.kind = "local disk (" + t + " on " + m.source + ")";
    v.persistence = Persistence::kNode;
    v.verdict = "survives the container and the job, but stays on this machine: stage results out";
  } else {
    v.kind = t;
    v.verdict = "unknown filesystem type; check how it is provided";
  }
  if (HasOption(m.options, "ro")) v.notes.push_back("mounted read-only");
  return v;
}

}  // namespace ferry::job
