// ferry mount URL MOUNTPOINT / ferry umount MOUNTPOINT: an S3 prefix (or any store) as a FUSE
// file tree. The filesystem is src/mount (fs.h for the semantics, fuse_adapter.h for libfuse).

#include <sys/stat.h>

#include <sys/wait.h>
#include <unistd.h>
#include <cerrno>
#include <filesystem>
#include <optional>

#include "base/log.h"
#include "cli/command.h"
#include "job/mountinfo.h"
#include "mount/fuse_adapter.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

// The mount at exactly `dir` (the newest, as mounts stack), if `dir` is a mount point.
std::optional<job::MountEntry> MountAt(const std::string& dir) {
  std::error_code ec;
  std::string path = std::filesystem::absolute(dir, ec).lexically_normal().string();
  if (path.size() > 1 && path.back() == '/') path.pop_back();
  auto mounts = job::ReadMountInfo();
  if (!mounts.ok()) return std::nullopt;
  std::optional<job::MountEntry> found;
  for (const auto& m : *mounts) {
    if (m.mount_point == path) found = m;
  }
  return found;
}

struct MountCliOptions {
  std::string url, mountpoint, cache_dir, cache_size = "10G", max_memory = "512M", log_file;
  int metadata_ttl = 60;
  bool read_only = false, foreground = false, allow_other = false;
};

Status RunMount(Context& ctx, const MountCliOptions& o, int* exit_code) {
  mount::MountOptions mo{.read_only = o.read_only,
                         .metadata_ttl = std::chrono::seconds(o.metadata_ttl)};
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.max_memory, "--max-memory", &mo.max_memory));
  FERRY_RETURN_IF_ERROR(ParseSize(ctx, o.cache_size, "--cache-size", &mo.cache_size));
  mo.cache_dir = o.cache_dir;
  if (o.metadata_ttl < 0) return Usage(ctx, InvalidArgument("--metadata-ttl must be >= 0"));
  struct stat st;
  if (::stat(o.mountpoint.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return NotFound("mount point '" + o.mountpoint + "' is not an existing directory");
  }
  if (auto m = MountAt(o.mountpoint)) {
    // Stacking hides the mount below (and its open files) until the new one is unmounted.
    return Status(StatusCode::kFailedPrecondition,
                  "'" + o.mountpoint + "' is already a mount point (" + m->fstype + " from '" +
                      m->source + "'); unmount it first (ferry umount " + o.mountpoint +
                      ") or choose another directory");
  }
  // Check the URL now, so a wrong bucket or credential fails here and not in the daemon.
  FERRY_ASSIGN_OR_RETURN(auto opened, OpenUrl(ctx, o.url));
  std::string prefix = storage::DirectoryPrefix(opened.key);
  auto page = opened.store->List({.prefix = prefix, .recursive = false, .max_keys = 1});
  if (!page.ok()) return page.status().WithContext("cannot mount '" + o.url + "'");
  if (page->objects.empty() && page->prefixes.empty()) {
    Log(LogLevel::kWarn,
        "'{}' has no objects under it (a missing or empty prefix; a typo?): the mount starts "
        "empty",
        opened.store->UrlFor(prefix));
  }
  mount::FuseOptions fo{.mountpoint = o.mountpoint,
                        .fsname = "ferry:" + opened.store->UrlFor(prefix),
                        .foreground = o.foreground,
                        .allow_other = o.allow_other,
                        .read_only = o.read_only,
                        .ttl_seconds = static_cast<double>(o.metadata_ttl),
                        .log_file = o.log_file.empty()
                                        ? std::string()
                                        : std::filesystem::absolute(o.log_file).string()};
  // A log file is read after the fact: it gets info lines (the mount, failures) by default.
  if (!o.log_file.empty() && !LogEnabled(LogLevel::kInfo)) SetLogLevel(LogLevel::kInfo);
  auto backend = ctx.backend_options;
  std::string url = o.url;
  *exit_code =
      mount::ServeFuse(fo, [backend, url, prefix, mo]() -> std::unique_ptr<mount::MountFs> {
        // Built in the daemon (after fork): its own registry, HTTP handles and threads.
        static storage::StoreRegistry registry;
        backends::RegisterDefaultBackends(registry, backend);
        auto opened = registry.Open(url);
        if (!opened.ok()) {
          Log(LogLevel::kError, "{}", opened.status().message());
          std::exit(1);
        }
        return std::make_unique<mount::MountFs>(opened->store, prefix, mo);
      });
  return Status();
}

int Fusermount(const std::string& mountpoint, bool lazy) {
  pid_t pid = ::fork();
  if (pid == 0) {
    if (lazy) {
      ::execlp("fusermount3", "fusermount3", "-u", "-z", mountpoint.c_str(),
               static_cast<char*>(nullptr));
    } else {
      ::execlp("fusermount3", "fusermount3", "-u", mountpoint.c_str(), static_cast<char*>(nullptr));
    }
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

// fusermount3 -u; a mount whose daemon died (ENOTCONN) that is still busy is detached lazily,
// since nothing can be served from it any more.
Status RunUmount(const std::string& mountpoint, bool lazy) {
  if (!MountAt(mountpoint)) {
    struct stat st;
    if (::stat(mountpoint.c_str(), &st) != 0 && errno != ENOTCONN) {
      return NotFound("'" + mountpoint + "' does not exist (nothing to unmount)");
    }
    return Status(StatusCode::kFailedPrecondition,
                  "'" + mountpoint + "' is not a mount point (nothing to unmount)");
  }
  int rc = Fusermount(mountpoint, lazy);
  if (rc == 127)
    return Status(StatusCode::kNotFound, "fusermount3 not found (Debian package fuse3)");
  if (rc == 0) return Status();
  struct stat st;
  if (!lazy && ::stat(mountpoint.c_str(), &st) != 0 && errno == ENOTCONN) {
    if (Fusermount(mountpoint, true) == 0) {
      Log(LogLevel::kWarn, "the daemon of '{}' was gone; detached the mount lazily", mountpoint);
      return Status();
    }
  }
  return Status(StatusCode::kFailedPrecondition,
                "cannot unmount '" + mountpoint +
                    "' (see fusermount3's message above: busy? --lazy detaches it now and "
                    "finishes when the last open file is closed)");
}

}  // namespace

void AddMountCommands(CLI::App& app, Action& action, int* exit_code) {
  auto o = std::make_shared<MountCliOptions>();
  auto* cmd =
      app.add_subcommand("mount", "Mount an S3 prefix (or any store URL) as a file tree (FUSE)");
  cmd->add_option("url", o->url, "s3://bucket/prefix/ (or a local path)")->required();
  cmd->add_option("mountpoint", o->mountpoint, "An existing directory")->required();
  cmd->add_flag("--read-only", o->read_only, "Refuse every write (EROFS)");
  cmd->add_option("--cache-dir", o->cache_dir,
                  "Local block cache directory (shared across mounts)");
  cmd->add_option("--cache-size", o->cache_size, "Block cache cap (default 10G)");
  cmd->add_option("--metadata-ttl", o->metadata_ttl,
                  "Seconds attributes and listings are trusted (default 60)");
  cmd->add_option("--max-memory", o->max_memory,
                  "Read-ahead memory of all open files (default 512M)");
  cmd->add_flag("--foreground,-f", o->foreground, "Stay in the foreground (logs on stderr)");
  cmd->add_flag("--allow-other", o->allow_other, "Let other users see the mount");
  cmd->add_option("--log-file", o->log_file, "Append the daemon's log here (with -v: more detail)");
  cmd->callback([o, &action, exit_code] {
    action = [o, exit_code](Context& ctx) { return RunMount(ctx, *o, exit_code); };
  });

  struct UmountOptions {
    std::string mountpoint;
    bool lazy = false;
  };
  auto u = std::make_shared<UmountOptions>();
  auto* um = app.add_subcommand("umount", "Unmount a ferry mount (also after its daemon died)");
  um->add_option("mountpoint", u->mountpoint, "The mount point")->required();
  um->add_flag("--lazy", u->lazy,
               "Detach now even with open files (they keep working until closed)");
  um->callback(
      [u, &action] { action = [u](Context&) { return RunUmount(u->mountpoint, u->lazy); }; });
}

}  // namespace ferry::cli
