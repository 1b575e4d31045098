#include "job/doctor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <random>

#include "base/errno_status.h"

namespace ferry::job {

namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

// Runs the measurements in a private directory under `dir`, removed afterwards.
Result<PathMeasurements> Measure(const std::string& dir, const DoctorOptions& o) {
  std::string scratch = dir + "/.ferry-doctor." + std::to_string(::getpid());
  if (::mkdir(scratch.c_str(), 0700) != 0) return ErrnoToStatus(errno, "create '" + scratch + "'");
  PathMeasurements m;
  std::string block(4096, 'f');
  Status status;
  auto start = Clock::now();
  for (int i = 0; i < o.small_files && status.ok(); ++i) {
    std::string f = scratch + "/f" + std::to_string(i);
    int fd = ::open(f.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ::write(fd, block.data(), block.size()) != 4096) {
      status = ErrnoToStatus(errno, "write '" + f + "'");
    }
    if (fd >= 0) ::close(fd);
    struct stat st;
    char buf[4096];
    fd = ::open(f.c_str(), O_RDONLY | O_CLOEXEC);
    if (status.ok() &&
        (::stat(f.c_str(), &st) != 0 || fd < 0 || ::read(fd, buf, sizeof buf) != 4096)) {
      status = ErrnoToStatus(errno, "read '" + f + "'");
    }
    if (fd >= 0) ::close(fd);
    ::unlink(f.c_str());
  }
  if (status.ok()) m.small_file_ops_per_s = o.small_files / std::max(Seconds(start), 1e-9);
  if (status.ok()) {
    std::string f = scratch + "/seq";
    std::string chunk(1 << 20, '\0');
    std::mt19937 rng(1);
    for (auto& c : chunk) c = static_cast<char>(rng());
    int fd = ::open(f.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0600);
    start = Clock::now();
    uint64_t written = 0;
    while (fd >= 0 && written < o.seq_bytes) {
      if (::write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) break;
      written += chunk.size();
    }
    if (fd < 0 || written < o.seq_bytes || ::fsync(fd) != 0) {
      status = ErrnoToStatus(errno, "write '" + f + "'");
    } else {
      m.seq_write_mib_s = static_cast<double>(written) / (1 << 20) / std::max(Seconds(start), 1e-9);
      ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // ask for a cold read where possible
      start = Clock::now();
      uint64_t read = 0;
      ssize_t n;
      while ((n = ::pread(fd, chunk.data(), chunk.size(), static_cast<off_t>(read))) > 0) read += n;
      m.seq_read_mib_s = static_cast<double>(read) / (1 << 20) / std::max(Seconds(start), 1e-9);
    }
    if (fd >= 0) ::close(fd);
    ::unlink(f.c_str());
  }
  ::rmdir(scratch.c_str());
  if (!status.ok()) return status;
  return m;
}

}  // namespace

Result<PathDiagnosis> DiagnosePath(const std::string& path, const DoctorOptions& options) {
  std::error_code ec;
  auto canonical = std::filesystem::canonical(path, ec);
  if (ec) return ErrnoToStatus(ec.value(), "doctor '" + path + "'");
  PathDiagnosis d{.path = canonical.string()};
  FERRY_ASSIGN_OR_RETURN(auto mounts, ReadMountInfo());
  auto mount = FindMount(mounts, d.path);
  if (!mount) return NotFound("doctor '" + path + "': no mount holds this path");
  d.mount = *mount;
  d.verdict = ClassifyMount(d.mount);
  struct statvfs vfs;
  if (::statvfs(d.path.c_str(), &vfs) == 0) {
    d.free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
    d.total_bytes = static_cast<uint64_t>(vfs.f_blocks) * vfs.f_frsize;
  }
  if (options.measure) {
    std::string dir =
        std::filesystem::is_directory(canonical) ? d.path : canonical.parent_path().string();
    auto m = Measure(dir, options);
    if (m.ok()) {
      d.measured = *m;
    } else {
      d.measure_error = m.status().message();
    }
    if (options.store) {
      auto r = ProbeReads(*options.store, options.key, options.read);
      if (r.ok()) {
        d.read = *r;
      } else {
        d.read_error = r.status().message();
      }
    }
  }
  return d;
}

}  // namespace ferry::job
