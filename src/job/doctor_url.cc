#include "job/doctor_url.h"

#include <algorithm>
#include <chrono>
#include <random>

namespace ferry::job {

namespace {
using Clock = std::chrono::steady_clock;
double Ms(Clock::time_point since) {
  return std::chrono::duration<double, std::milli>(Clock::now() - since).count();
}
}  // namespace

Result<UrlDiagnosis> DiagnoseUrl(const std::string& url, storage::StoreRegistry& registry,
                                 bool measure) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, storage::ParseUrl(url));
  if (parsed.scheme != storage::Scheme::kS3) {
    return Unimplemented("doctor '" + url + "': only local paths and s3:// URLs are diagnosed");
  }
  UrlDiagnosis d{.url = url};
  FERRY_ASSIGN_OR_RETURN(auto opened, registry.Open(url));
  storage::StoreDescription desc = opened.store->Describe();
  d.endpoint = desc.endpoint;
  d.region = desc.region;
  d.addressing = desc.addressing;
  if (!desc.credentials) {
    d.credentials = "none";
    d.errors.push_back("credentials: " + desc.credentials_error.message());
    return d;
  }
  d.credentials = desc.credentials->summary;
  std::string prefix = storage::DirectoryPrefix(opened.key);
  std::vector<double> lat;
  for (int i = 0; i < 5; ++i) {
    auto start = Clock::now();
    auto page = opened.store->List({.prefix = prefix, .recursive = false, .max_keys = 1});
    if (!page.ok()) {
      d.errors.push_back("list: " + page.status().message());
      break;
    }
    lat.push_back(Ms(start));
  }
  if (lat.size() == 5) {
    std::sort(lat.begin(), lat.end());
    d.list_latency_ms = lat[2];
    d.listable = true;
  }
  // Reads first, so that the write probe below is not among the objects read.
  if (measure && d.listable) {
    auto read = ProbeReads(*opened.store, opened.key, {});
    if (read.ok()) {
      d.read = *read;
    } else {
      d.errors.push_back("read: " + read.status().message());
    }
  }
  std::random_device rd;
  std::string key = prefix + "_ferry/doctor-probe-" + std::to_string(rd());
  std::string data(measure ? (16u << 20) : 4096u, 'd');
  auto start = Clock::now();
  auto written = opened.store->WriteAll(key, data);
  double write_ms = Ms(start);
  if (!written.ok()) {
    d.errors.push_back("write: " + written.status().message());
    return d;
  }
  start = Clock::now();
  auto back = opened.store->ReadAll(key);
  double read_ms = Ms(start);
  Status del = opened.store->Delete(key);
  if (!back.ok() || *back != data) {
    d.errors.push_back("read back: " +
                       (back.ok() ? std::string("different bytes") : back.status().message()));
  } else if (!del.ok()) {
    d.errors.push_back("delete: " + del.message());
  } else {
    d.writable = true;
  }
  if (measure && d.writable) {
    d.write_mib_s = 16.0 / (write_ms / 1000.0);
    d.read_mib_s = 16.0 / (read_ms / 1000.0);
  }
  return d;
}

}  // namespace ferry::job
