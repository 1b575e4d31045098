// 3.12: fuse_session_loop_mt takes the fuse_loop_config made by fuse_loop_cfg_create(). Below
// 3.12 the same call name maps to the 3.2 entry point, which reads that object as the old
// two-field struct: clone_fd became the version tag and max_idle_threads 0, so libfuse made a
// thread (and a /dev/fuse clone) for every request and ended it afterwards.
#define FUSE_USE_VERSION 312
#include "mount/fuse_adapter.h"

#include <fcntl.h>
#include <fuse_lowlevel.h>
static_assert(FUSE_USE_VERSION >= 312, "fuse_session_loop_mt needs the 3.12 loop config API");
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "base/log.h"
#include "mount/exception_barrier.h"

namespace ferry::mount {

namespace {

struct State {
  std::unique_ptr<MountFs> fs;
  FuseOptions options;
  fuse_session* se = nullptr;
};

State& S(fuse_req_t req) { return *static_cast<State*>(fuse_req_userdata(req)); }

// What the barrier answers when a callback throws.
enum class OnThrow {
  kReplyEio,   // the request gets EIO
  kReplyNone,  // forget: the request is ended without an answer, as it always is
  kNoReply,    // init, or the callback has answered already
};

// The exception barrier of every libfuse callback (exception_barrier.h): what escapes the core
// (bad_alloc, an unexpected state) is logged and the request answered as `on_throw` says.
template <typename Body>
void Guarded(fuse_req_t req, const char* op, OnThrow on_throw, Body&& body) noexcept {
  if (RunCatchingAll(op, std::forward<Body>(body))) return;
  if (on_throw == OnThrow::kReplyEio) fuse_reply_err(req, EIO);
  if (on_throw == OnThrow::kReplyNone) fuse_reply_none(req);
}

template <typename Body>
void Guarded(fuse_req_t req, const char* op, Body&& body) noexcept {
  Guarded(req, op, OnThrow::kReplyEio, std::forward<Body>(body));
}

// The thread behind a request (the core resolves it to its process where that matters).
uint64_t Caller(fuse_req_t req) {
  pid_t tid = fuse_req_ctx(req)->pid;
  return tid > 0 ? static_cast<uint64_t>(tid) : 0;
}

struct stat ToStat(fuse_req_t req, const Attr& a) {
  const Permissions p = S(req).fs->PermissionsOf(a);
  struct stat st {};
  st.st_ino = a.ino;
  st.st_mode = p.mode;
  st.st_nlink = a.dir ? 2 : 1;
  st.st_uid = p.uid;
  st.st_gid = p.gid;
  st.st_size = static_cast<off_t>(a.size);
  st.st_blksize = 1 << 20;
  st.st_blocks = static_cast<blkcnt_t>((a.size + 511) / 512);
  auto ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(a.mtime.time_since_epoch()).count();
  st.st_mtim.tv_sec = ns / 1000000000;
  st.st_mtim.tv_nsec = ns % 1000000000;
  st.st_ctim = st.st_mtim;
  st.st_atim = st.st_mtim;
  return st;
}

fuse_entry_param Entry(fuse_req_t req, const Attr& a) {
  fuse_entry_param e{};
  e.ino = a.ino;
  e.attr = ToStat(req, a);
  // Files being written change size: the kernel must not cache their attributes.
  double ttl = a.local ? 0 : S(req).options.ttl_seconds;
  e.attr_timeout = ttl;
  e.entry_timeout = ttl;
  return e;
}

// Replies 0 or the error of a call that returns no value.
void ReplyStatus(fuse_req_t req, const Fs<void>& r) { fuse_reply_err(req, r ? 0 : r.error()); }

// The core decided that the kernel's cached attributes of `ino` are another version's: drop
// them (attributes only: this never waits on pages, so it is safe inside any request).
void InvalidateAttr(fuse_req_t req, fuse_ino_t ino) {
  int rc = fuse_lowlevel_notify_inval_inode(S(req).se, ino, -1, 0);
  if (rc != 0 && rc != -ENOENT) Log(LogLevel::kWarn, "invalidating inode {}: {}", ino, rc);
}

// The kernel refreshes a file's attributes before every cached read once they are invalid (and
// drops its pages when size or mtime changed): what kernel_cache.h relies on. libfuse asks for
// it by default; ask explicitly.
void OpInit(void*, fuse_conn_info* conn) {
  Guarded(nullptr, "init", OnThrow::kNoReply, [&] {
    if (conn->capable & FUSE_CAP_AUTO_INVAL_DATA) conn->want |= FUSE_CAP_AUTO_INVAL_DATA;
  });
}

void OpLookup(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "lookup", [&] {
    auto a = S(req).fs->Lookup(parent, name);
    if (!a) {
      if (a.error() == ENOENT) {  // a negative entry the kernel may cache too
        fuse_entry_param e{};
        e.entry_timeout = S(req).options.ttl_seconds;
        fuse_reply_entry(req, &e);
        return;
      }
      fuse_reply_err(req, a.error());
      return;
    }
    auto e = Entry(req, *a);
    fuse_reply_entry(req, &e);
  });
}

void OpForget(fuse_req_t req, fuse_ino_t ino, uint64_t n) {
  Guarded(req, "forget", OnThrow::kReplyNone, [&] {
    S(req).fs->Forget(ino, n);
    fuse_reply_none(req);
  });
}

void OpForgetMulti(fuse_req_t req, size_t count, fuse_forget_data* forgets) {
  Guarded(req, "forget", OnThrow::kReplyNone, [&] {
    for (size_t i = 0; i < count; ++i) S(req).fs->Forget(forgets[i].ino, forgets[i].nlookup);
    fuse_reply_none(req);
  });
}

void OpGetattr(fuse_req_t req, fuse_ino_t ino, fuse_file_info*) {
  Guarded(req, "getattr", [&] {
    auto a = S(req).fs->GetAttr(ino);
    if (!a) return (void)fuse_reply_err(req, a.error());
    auto st = ToStat(req, *a);
    fuse_reply_attr(req, &st, a->local ? 0 : S(req).options.ttl_seconds);
  });
}

void OpSetattr(fuse_req_t req, fuse_ino_t ino, struct stat* attr, int to_set, fuse_file_info*) {
  Guarded(req, "setattr", [&] {
    AttrChange change;
    if (to_set & FUSE_SET_ATTR_SIZE) change.size = static_cast<uint64_t>(attr->st_size);
    if (to_set & FUSE_SET_ATTR_MODE) change.mode = attr->st_mode & 07777;
    if (to_set & FUSE_SET_ATTR_UID) change.uid = attr->st_uid;
    if (to_set & FUSE_SET_ATTR_GID) change.gid = attr->st_gid;
    auto a = S(req).fs->SetAttr(ino, change);
    if (!a) return (void)fuse_reply_err(req, a.error());
    auto st = ToStat(req, *a);
    fuse_reply_attr(req, &st, 0);
  });
}

void OpOpendir(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "opendir", [&] {
    auto h = S(req).fs->OpenDir(ino);
    if (!h) return (void)fuse_reply_err(req, h.error());
    fi->fh = *h;
    fuse_reply_open(req, fi);
  });
}

void OpReaddir(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Guarded(req, "readdir", [&] {
    std::vector<char> buf(size);
    size_t used = 0;
    auto r = S(req).fs->ReadDir(fi->fh, static_cast<uint64_t>(off),
                                [&](const std::string& name, const Attr& a, uint64_t next) {
                                  struct stat st {};
                                  st.st_ino = a.ino;
                                  st.st_mode = a.dir ? S_IFDIR : S_IFREG;
                                  size_t need =
                                      fuse_add_direntry(req, nullptr, 0, name.c_str(), nullptr, 0);
                                  if (used + need > size) return false;
                                  fuse_add_direntry(req, buf.data() + used, size - used,
                                                    name.c_str(), &st, static_cast<off_t>(next));
                                  used += need;
                                  return true;
                                });
    if (!r && used == 0) return (void)fuse_reply_err(req, r.error());
    fuse_reply_buf(req, buf.data(), used);
  });
}

void OpReleasedir(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Guarded(req, "releasedir", [&] {
    S(req).fs->ReleaseDir(fi->fh);
    fuse_reply_err(req, 0);
  });
}

void OpOpen(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "open", [&] {
    auto r = S(req).fs->Open(ino, fi->flags, Caller(req));
    if (!r) return (void)fuse_reply_err(req, r.error());
    if (r->caching.invalidate_attr) InvalidateAttr(req, ino);
    fi->fh = r->fh;
    fi->keep_cache = r->caching.keep_cache ? 1 : 0;
    fi->direct_io = r->caching.direct_io ? 1 : 0;
    // An interrupted open() never gets a release: end a reader here (a writer is left alone,
    // as its release would commit an empty object).
    if (fuse_reply_open(req, fi) == -ENOENT && (fi->flags & O_ACCMODE) == O_RDONLY) {
      Guarded(req, "open (interrupted)", OnThrow::kNoReply, [&] { S(req).fs->Release(r->fh); });
    }
  });
}

void OpRead(fuse_req_t req, fuse_ino_t, size_t size, off_t off, fuse_file_info* fi) {
  Guarded(req, "read", [&] {
    auto data = S(req).fs->Read(fi->fh, static_cast<uint64_t>(off), size);
    if (!data) return (void)fuse_reply_err(req, data.error());
    fuse_reply_buf(req, data->data(), data->size());
  });
}

void OpCreate(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t, fuse_file_info* fi) {
  Guarded(req, "create", [&] {
    auto r = S(req).fs->Create(parent, name, fi->flags, Caller(req));
    if (!r) return (void)fuse_reply_err(req, r.error());
    fi->fh = r->second;
    auto e = Entry(req, r->first);
    fuse_reply_create(req, &e, fi);
  });
}

void OpWrite(fuse_req_t req, fuse_ino_t, const char* buf, size_t size, off_t off,
             fuse_file_info* fi) {
  Guarded(req, "write", [&] {
    auto n = S(req).fs->Write(fi->fh, static_cast<uint64_t>(off), std::string_view(buf, size));
    if (!n) return (void)fuse_reply_err(req, n.error());
    fuse_reply_write(req, *n);
  });
}

void OpFlush(fuse_req_t req, fuse_ino_t, fuse_file_info* fi) {
  Guarded(req, "flush", [&] { ReplyStatus(req, S(req).fs->Flush(fi->fh, Caller(req))); });
}

void OpFsync(fuse_req_t req, fuse_ino_t, int, fuse_file_info* fi) {
  Guarded(req, "fsync", [&] { ReplyStatus(req, S(req).fs->Fsync(fi->fh)); });
}

void OpRelease(fuse_req_t req, fuse_ino_t ino, fuse_file_info* fi) {
  Guarded(req, "release", [&] {
    if (S(req).fs->Release(fi->fh)) InvalidateAttr(req, ino);
    fuse_reply_err(req, 0);
  });
}

void OpUnlink(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "unlink", [&] { ReplyStatus(req, S(req).fs->Unlink(parent, name)); });
}

void OpMkdir(fuse_req_t req, fuse_ino_t parent, const char* name, mode_t) {
  Guarded(req, "mkdir", [&] {
    auto a = S(req).fs->Mkdir(parent, name);
    if (!a) return (void)fuse_reply_err(req, a.error());
    auto e = Entry(req, *a);
    e.attr_timeout = e.entry_timeout = 0;
    fuse_reply_entry(req, &e);
  });
}

void OpRmdir(fuse_req_t req, fuse_ino_t parent, const char* name) {
  Guarded(req, "rmdir", [&] { ReplyStatus(req, S(req).fs->Rmdir(parent, name)); });
}

void OpRename(fuse_req_t req, fuse_ino_t parent, const char* name, fuse_ino_t newparent,
              const char* newname, unsigned int) {
  Guarded(req, "rename",
          [&] { ReplyStatus(req, S(req).fs->Rename(parent, name, newparent, newname)); });
}

void OpLink(fuse_req_t req, fuse_ino_t, fuse_ino_t, const char*) {
  Guarded(req, "link", [&] { fuse_reply_err(req, EPERM); });
}

void OpSymlink(fuse_req_t req, const char*, fuse_ino_t, const char*) {
  Guarded(req, "symlink", [&] { fuse_reply_err(req, EPERM); });
}

void OpMknod(fuse_req_t req, fuse_ino_t, const char*, mode_t, dev_t) {
  Guarded(req, "mknod", [&] { fuse_reply_err(req, EPERM); });
}

void OpStatfs(fuse_req_t req, fuse_ino_t) {
  Guarded(req, "statfs", [&] {
    struct statvfs st {};
    st.f_bsize = st.f_frsize = 1 << 20;
    st.f_blocks = st.f_bfree = st.f_bavail = 1ull << 30;  // object stores have no fixed size
    st.f_files = st.f_ffree = 1ull << 30;
    st.f_namemax = 1024;
    fuse_reply_statfs(req, &st);
  });
}

}  // namespace

int ServeFuse(const FuseOptions& options, const std::function<std::unique_ptr<MountFs>()>& make) {
  fuse_lowlevel_ops ops{};
  ops.init = OpInit;
  ops.lookup = OpLookup;
  ops.forget = OpForget;
  ops.forget_multi = OpForgetMulti;
  ops.getattr = OpGetattr;
  ops.setattr = OpSetattr;
  ops.opendir = OpOpendir;
  ops.readdir = OpReaddir;
  ops.releasedir = OpReleasedir;
  ops.open = OpOpen;
  ops.read = OpRead;
  ops.create = OpCreate;
  ops.write = OpWrite;
  ops.flush = OpFlush;
  ops.fsync = OpFsync;
  ops.release = OpRelease;
  ops.unlink = OpUnlink;
  ops.mkdir = OpMkdir;
  ops.rmdir = OpRmdir;
  ops.rename = OpRename;
  ops.link = OpLink;
  ops.symlink = OpSymlink;
  ops.mknod = OpMknod;
  ops.statfs = OpStatfs;

  std::string mount_opts = "fsname=" + options.fsname + ",subtype=ferry,default_permissions";
  if (options.allow_other) mount_opts += ",allow_other";
  if (options.read_only) mount_opts += ",ro";
  std::vector<std::string> argv_s = {"ferry", "-o", mount_opts};
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  fuse_args args = FUSE_ARGS_INIT(static_cast<int>(argv.size()), argv.data());
  State state{.fs = nullptr, .options = options};
  fuse_session* se = fuse_session_new(&args, &ops, sizeof ops, &state);
  fuse_opt_free_args(&args);  // libfuse may have grown them; the session keeps what it needs
  if (!se) {
    Log(LogLevel::kError, "cannot start a FUSE session (is /dev/fuse there?)");
    return 1;
  }
  state.se = se;
  if (fuse_set_signal_handlers(se) != 0 ||
      fuse_session_mount(se, options.mountpoint.c_str()) != 0) {
    Log(LogLevel::kError,
        "cannot mount on '{}' (does it exist, is something mounted there, is /dev/fuse usable?)",
        options.mountpoint);
    fuse_session_destroy(se);
    return 1;
  }
  fuse_daemonize(options.foreground ? 1 : 0);
  if (!options.log_file.empty()) {
    // Log lines (redacted like all of ferry's) go to the file from now on.
    int fd = ::open(options.log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ::dup2(fd, STDERR_FILENO);
      ::close(fd);
    }
  }
  state.fs = make();  // after the fork: its threads belong to the daemon
  state.fs->SetPagePusher([se](uint64_t ino, uint64_t offset, std::string_view bytes) {
    fuse_bufvec buf{};  // FUSE_BUFVEC_INIT's fields (the macro is a C compound literal)
    buf.count = 1;
    buf.buf[0].size = bytes.size();
    buf.buf[0].mem = const_cast<char*>(bytes.data());  // only read by libfuse
    buf.buf[0].fd = -1;
    int rc =
        fuse_lowlevel_notify_store(se, ino, static_cast<off_t>(offset), &buf, FUSE_BUF_NO_SPLICE);
    if (rc != 0 && rc != -ENOENT) Log(LogLevel::kDebug, "storing pages of inode {}: {}", ino, rc);
  });
  Log(LogLevel::kInfo, "serving {} on {} (pid {})", options.fsname, options.mountpoint, ::getpid());
  fuse_loop_config* config = fuse_loop_cfg_create();
  fuse_loop_cfg_set_max_threads(config, 32);
  int rc = fuse_session_loop_mt(se, config);
  fuse_loop_cfg_destroy(config);
  state.fs->SetPagePusher(nullptr);  // waits for a store in progress; none after this
  fuse_session_unmount(se);
  fuse_remove_signal_handlers(se);
  fuse_session_destroy(se);
  state.fs.reset();
  return rc == 0 ? 0 : 1;
}

}  // namespace ferry::mount
