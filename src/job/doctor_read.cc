#include "job/doctor_read.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "storage/url.h"
#include "transfer/copy_engine.h"
#include "transfer/copy_options.h"

namespace ferry::job {

namespace {

// Not `Clock`: this file shares a unity batch with job/run_system.h's ferry::job::Clock.
using ProbeClock = std::chrono::steady_clock;

double Seconds(ProbeClock::time_point since) {
  return std::chrono::duration<double>(ProbeClock::now() - since).count();
}

ProbeClock::time_point Deadline(double seconds) {
  return ProbeClock::now() +
         std::chrono::duration_cast<ProbeClock::duration>(std::chrono::duration<double>(seconds));
}

// Runs fn(i) for i in [0, n) on `workers` threads, taking no new item after `deadline`.
// Returns the first error; *done counts the items that finished OK.
class FirstError final {
 public:
  void Set(const Status& s) EXCLUDES(mu_) {
    MutexLock lock(mu_);
    if (status_.ok()) status_ = s;
  }
  Status Get() EXCLUDES(mu_) {
    MutexLock lock(mu_);
    return status_;
  }

 private:
  Mutex mu_;
  Status status_ GUARDED_BY(mu_);
};

template <typename Fn>
Status ForEachParallel(size_t n, int workers, ProbeClock::time_point deadline, Fn fn) {
  std::atomic<size_t> next{0};
  std::atomic<bool> failed{false};
  FirstError error;
  auto work = [&] {
    for (size_t i; !failed && ProbeClock::now() < deadline && (i = next++) < n;) {
      Status s = fn(i);
      if (!s.ok()) {
        error.Set(s);
        failed = true;
      }
    }
  };
  std::vector<std::thread> threads;
  int count = static_cast<int>(std::min<size_t>(n, static_cast<size_t>(std::max(workers, 1))));
  for (int t = 0; t < count; ++t) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  return error.Get();
}

// Local files: drop their cached pages so the throughput is the device's or the server's.
void DropCachedPages(storage::Store& store, const std::string& key) {
  if (!store.capabilities().local_files) return;
  auto path = store.LocalPathFor(key);
  if (!path) return;
  int fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NOATIME);
  if (fd < 0) fd = ::open(path->c_str(), O_RDONLY | O_CLOEXEC);  // O_NOATIME: owner only
  if (fd < 0) return;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
}

struct Part {
  std::string key;
  uint64_t offset, length;
};

}  // namespace

std::optional<double> PredictCopySeconds(uint64_t small_files, uint64_t large_bytes,
                                         double files_per_s, double mib_s,
                                         double small_bytes_per_s) {
  double seconds = 0;
  if (small_files > 0) {
    if (files_per_s <= 0) return std::nullopt;
    seconds += static_cast<double>(small_files) / files_per_s;
  }
  if (large_bytes > 0) {
    double bytes_per_s = mib_s > 0 ? mib_s * (1 << 20) : small_bytes_per_s;
    if (bytes_per_s <= 0) return std::nullopt;
    seconds += static_cast<double>(large_bytes) / bytes_per_s;
  }
  return seconds;
}

Result<ReadProbe> ProbeReads(storage::Store& store, const std::string& key,
                             const ReadProbeOptions& o) {
  ReadProbe p;
  // One place for the default: what `ferry cp --transfers` starts with.
  p.concurrency = o.concurrency > 0 ? o.concurrency : transfer::CopyOptions{}.transfers;

  std::vector<storage::ObjectInfo> small, large;
  auto add = [&](const storage::ObjectInfo& info) {
    ++p.listed_files;
    p.listed_bytes += info.size;
    if (info.size < o.small_file_bytes) {
      ++p.listed_small_files;
      small.push_back(info);
    } else {
      p.listed_large_bytes += info.size;
      large.push_back(info);
    }
  };
  bool single = !key.empty() && key.back() != '/' && !store.IsDirectory(key);
  if (single) {
    auto info = store.Stat(key);
    if (info.ok()) {
      add(*info);
      p.listing_complete = true;
    } else if (info.status().code() != StatusCode::kNotFound) {
      return info.status();
    } else {
      single = false;  // an S3 prefix without a trailing '/'
    }
  }
  if (!single) {
    auto deadline = Deadline(o.list_seconds);
    bool stopped = false;
    Status listed =
        store.ListAll({.prefix = storage::DirectoryPrefix(key), .recursive = true},
                      [&](const storage::ListPage& page) -> Status {
                        for (const auto& info : page.objects) {
                          if (p.listed_files >= o.list_limit || ProbeClock::now() >= deadline) {
                            stopped = true;
                            return Status(StatusCode::kCancelled, "enough listed");
                          }
                          add(info);
                        }
                        return Status();
                      });
    if (!listed.ok() && !stopped) return listed;
    p.listing_complete = !stopped;
  }

  // Small files spread evenly over the listing (its order is by name: every directory).
  std::vector<const storage::ObjectInfo*> sample;
  if (!small.empty() && o.small_files > 0) {
    size_t want = std::min<size_t>(small.size(), o.small_files);
    for (size_t i = 0; i < want; ++i) sample.push_back(&small[i * small.size() / want]);
  }
  if (!sample.empty()) {
    bool in_place = store.capabilities().in_place_updates;
    std::atomic<uint64_t> files{0}, bytes{0};
    auto start = ProbeClock::now();
    Status s = ForEachParallel(
        sample.size(), p.concurrency, Deadline(o.small_seconds), [&](size_t i) -> Status {
          // The source's side of the copy engine's work for one object (object_copy.cc): a
          // read pinned to the listed version, then, where objects change in place (local
          // files, NFS), a stat to check it did not change meanwhile.
          const storage::ObjectInfo& info = *sample[i];
          uint64_t n = 0;
          Status r = store.Read(info.key, {.if_match = info.etag}, [&](std::string_view chunk) {
            n += chunk.size();
            return Status();
          });
          if (r.code() == StatusCode::kNotFound || r.code() == StatusCode::kFailedPrecondition) {
            return Status();  // gone or changed since the listing: not counted
          }
          if (!r.ok()) return r;
          if (in_place && !info.etag.empty()) {
            auto now = store.Stat(info.key);
            if (!now.ok() && now.status().code() != StatusCode::kNotFound) return now.status();
          }
          ++files;
          bytes += n;
          return Status();
        });
    p.small_seconds = Seconds(start);
    FERRY_RETURN_IF_ERROR(s);
    p.small_files_read = files;
    p.small_bytes_read = bytes;
    if (files > 0) p.small_files_per_s = static_cast<double>(files) / p.small_seconds;
  }

  // The largest files in parts, as the copy engine splits them.
  std::sort(large.begin(), large.end(),
            [](const auto& a, const auto& b) { return a.size > b.size; });
  if (large.size() > static_cast<size_t>(std::max(o.large_files, 0))) {
    large.resize(std::max(o.large_files, 0));
  }
  std::vector<Part> parts;
  uint64_t planned = 0;
  // Interleave the files' parts so that a cut by the byte budget still reads from each.
  std::vector<uint64_t> offsets(large.size(), 0);
  for (bool more = true; more && planned < o.large_bytes;) {
    more = false;
    for (size_t f = 0; f < large.size() && planned < o.large_bytes; ++f) {
      uint64_t part = transfer::ChoosePartSize(large[f].size, 0);
      if (offsets[f] >= large[f].size) continue;
      uint64_t len = std::min({part, large[f].size - offsets[f], o.large_bytes - planned});
      parts.push_back({large[f].key, offsets[f], len});
      offsets[f] += len;
      planned += len;
      more = true;
    }
  }
  if (!parts.empty()) {
    for (const auto& f : large) DropCachedPages(store, f.key);
    std::atomic<uint64_t> bytes{0};
    std::vector<std::atomic<bool>> touched(large.size());
    auto start = ProbeClock::now();
    Status s = ForEachParallel(
        parts.size(), p.concurrency, Deadline(o.large_seconds), [&](size_t i) -> Status {
          const Part& part = parts[i];
          Status r = store.Read(part.key, {.range = storage::ByteRange{part.offset, part.length}},
                                [&](std::string_view chunk) {
                                  bytes += chunk.size();
                                  return Status();
                                });
          if (r.code() == StatusCode::kNotFound) return Status();
          if (!r.ok()) return r;
          for (size_t f = 0; f < large.size(); ++f) {
            if (large[f].key == part.key) touched[f] = true;
          }
          return Status();
        });
    p.large_seconds = Seconds(start);
    FERRY_RETURN_IF_ERROR(s);
    p.large_bytes_read = bytes;
    for (const auto& t : touched) p.large_files_read += t ? 1 : 0;
    if (bytes > 0) {
      p.read_mib_s = static_cast<double>(bytes) / (1 << 20) / std::max(p.large_seconds, 1e-9);
    }
  }
  double small_bytes_per_s =
      p.small_seconds > 0 ? static_cast<double>(p.small_bytes_read) / p.small_seconds : 0;
  p.predicted_copy_seconds =
      PredictCopySeconds(p.listed_small_files, p.listed_large_bytes, p.small_files_per_s,
                         p.read_mib_s, small_bytes_per_s);
  return p;
}

}  // namespace ferry::job
