// ferry._native: the C++ shard reader (src/shard) for Python, and the system-metrics sampler of
// `ferry run --track` (src/sysmetrics) for ferry.track. Thin: ferry/data.py builds the
// PyTorch-facing ShardDataset on it. Each reader owns its store registry (HTTP handles, threads),
// created where the reader is, so readers made in DataLoader worker processes after fork() are
// independent of the parent's.

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "backends/backends.h"
#include "base/crc32c.h"
#include "base/environment.h"
#include "base/log.h"
#include "shard/plan.h"
#include "shard/reader.h"
#include "shard/resolve.h"
#include "sysmetrics/sampler.h"

namespace py = pybind11;

namespace ferry {
namespace {

// Errors become Python exceptions with the Status message: FileNotFoundError for missing
// things, ValueError for bad arguments, OSError otherwise (I/O, corrupt data, credentials).
void Raise(const Status& s) {
  PyObject* type = PyExc_OSError;
  if (s.code() == StatusCode::kNotFound) type = PyExc_FileNotFoundError;
  if (s.code() == StatusCode::kInvalidArgument) type = PyExc_ValueError;
  PyErr_SetString(type, s.message().c_str());
  throw py::error_already_set();
}

std::unique_ptr<storage::StoreRegistry> MakeRegistry() {
  auto registry = std::make_unique<storage::StoreRegistry>();
  backends::RegisterDefaultBackends(*registry, {.env = std::make_shared<ProcessEnvironment>()});
  return registry;
}

class PyShardReader {
 public:
  PyShardReader(const std::string& url, uint64_t seed, uint64_t epoch, bool shuffle,
                uint64_t shuffle_buffer, int rank, int world_size, int worker, int num_workers,
                uint64_t start, int prefetch_shards, uint64_t read_ahead,
                const std::string& cache_dir, uint64_t cache_size, bool skip_corrupt)
      : registry_(MakeRegistry()) {
    shard::ReaderOptions o{.plan = {.seed = seed,
                                    .epoch = epoch,
                                    .shuffle = shuffle,
                                    .shuffle_buffer = shuffle_buffer,
                                    .split = {rank, world_size, worker, num_workers}},
                           .start = start,
                           .prefetch_shards = prefetch_shards,
                           .read_ahead = read_ahead,
                           .cache_dir = cache_dir,
                           .cache_size = cache_size,
                           .skip_corrupt = skip_corrupt};
    Result<std::unique_ptr<shard::ShardReader>> r = Status();
    {
      py::gil_scoped_release nogil;
      r = shard::ShardReader::Open(*registry_, url, o);
    }
    if (!r.ok()) Raise(r.status());
    reader_ = std::move(*r);
  }

  py::object Next() {
    Result<std::optional<shard::Sample>> s = Status();
    {
      py::gil_scoped_release nogil;  // other threads (and the training step) run meanwhile
      s = reader_->Next();
    }
    if (!s.ok()) Raise(s.status());
    if (!*s) throw py::stop_iteration();
    return ToDict(**s);
  }

  // Up to `n` samples as a list of dicts (fewer at the end of the split; [] when done): one call
  // and one GIL release for many samples. An error after some samples is raised by the next call,
  // so the samples before it are delivered as one at a time would deliver them.
  py::list NextBatch(size_t n) {
    if (!pending_.ok()) {
      Status s = pending_;
      pending_ = Status();
      Raise(s);
    }
    std::vector<shard::Sample> got;
    got.reserve(n);
    {
      py::gil_scoped_release nogil;
      while (got.size() < n) {
        auto s = reader_->Next();
        if (!s.ok()) {
          pending_ = s.status();
          break;
        }
        if (!*s) break;
        got.push_back(std::move(**s));
      }
    }
    if (got.empty() && !pending_.ok()) return NextBatch(n);
    py::list out(got.size());
    for (size_t i = 0; i < got.size(); ++i) out[i] = ToDict(got[i]);
    return out;
  }

  uint64_t position() const { return reader_->position(); }
  uint64_t size() const { return reader_->size(); }
  uint64_t skipped() const { return reader_->skipped(); }

 private:
  static py::dict ToDict(const shard::Sample& s) {
    py::dict d;
    d["__key__"] = py::str(s.key);
    for (const auto& [ext, data] : s.files) d[py::str(ext)] = py::bytes(data);
    return d;
  }

  std::unique_ptr<storage::StoreRegistry> registry_;
  std::unique_ptr<shard::ShardReader> reader_;
  Status pending_;  // an error met by NextBatch() after samples it returned
};

// Samples per split for each worker of one rank: what ferry.data needs to map the samples a
// training loop consumed onto per-worker resume positions.
std::vector<uint64_t> WorkerSizes(const std::string& url, uint64_t seed, uint64_t epoch,
                                  bool shuffle, int rank, int world_size, int num_workers) {
  auto registry = MakeRegistry();
  auto opened = shard::OpenIndex(*registry, url);
  if (!opened.ok()) Raise(opened.status());
  const shard::DatasetIndex& index = opened->index;
  std::vector<uint64_t> sizes;
  for (int w = 0; w < num_workers; ++w) {
    auto plan = shard::MakePlan(index, {.seed = seed,
                                        .epoch = epoch,
                                        .shuffle = shuffle,
                                        .shuffle_buffer = 1,
                                        .split = {rank, world_size, w, num_workers}});
    if (!plan.ok()) Raise(plan.status());
    sizes.push_back(plan->inputs());
  }
  return sizes;
}

py::dict IndexSummary(const std::string& url) {
  auto registry = MakeRegistry();
  auto opened = shard::OpenIndex(*registry, url);
  if (!opened.ok()) Raise(opened.status());
  const shard::DatasetIndex& index = opened->index;
  py::dict d;
  d["samples"] = index.samples();
  d["bytes"] = index.bytes();
  d["shards"] = index.shards.size();
  d["crc32c"] = Crc32cHex(opened->crc32c);  // the dataset's identity in resume states
  return d;
}

// What ShardDataset was given (an index, a prefix, a directory, .tar URLs) -> a Ferry index URL;
// shards without one are indexed now and the index cached (shard/resolve.h).
py::dict Resolve(const std::vector<std::string>& inputs, const std::string& cache_dir, int jobs) {
  auto registry = MakeRegistry();
  Result<shard::ResolvedDataset> r = Status();
  {
    py::gil_scoped_release nogil;
    r = shard::ResolveDataset(*registry, inputs, {.cache_dir = cache_dir, .jobs = jobs});
  }
  if (!r.ok()) Raise(r.status());
  py::dict d;
  d["index_url"] = r->index_url;
  d["scanned"] = r->scanned;
  d["cached"] = r->cached;
  d["shards"] = r->shards;
  return d;
}

}  // namespace
}  // namespace ferry

PYBIND11_MODULE(_native, m) {
  using ferry::PyShardReader;
  m.doc() = "Ferry's C++ shard reader (use ferry.data.ShardDataset)";
  // FERRY_LOG=error|warn|info|debug sets the C++ log level (stderr); default warn.
  if (const char* v = std::getenv("FERRY_LOG")) {
    std::string l = v;
    ferry::SetLogLevel(l == "debug"   ? ferry::LogLevel::kDebug
                       : l == "info"  ? ferry::LogLevel::kInfo
                       : l == "error" ? ferry::LogLevel::kError
                                      : ferry::LogLevel::kWarn);
  }
  py::class_<PyShardReader>(m, "ShardReader")
      .def(py::init<const std::string&, uint64_t, uint64_t, bool, uint64_t, int, int, int, int,
                    uint64_t, int, uint64_t, const std::string&, uint64_t, bool>(),
           py::arg("url"), py::arg("seed") = 0, py::arg("epoch") = 0, py::arg("shuffle") = true,
           py::arg("shuffle_buffer") = 1000, py::arg("rank") = 0, py::arg("world_size") = 1,
           py::arg("worker") = 0, py::arg("num_workers") = 1, py::arg("start") = 0,
           py::arg("prefetch_shards") = 2, py::arg("read_ahead") = 64ull << 20,
           py::arg("cache_dir") = "", py::arg("cache_size") = 0, py::arg("skip_corrupt") = false)
      .def("__iter__", [](PyShardReader& r) -> PyShardReader& { return r; })
      .def("__next__", &PyShardReader::Next)
      .def("next_batch", &PyShardReader::NextBatch, py::arg("n"))
      .def_property_readonly("position", &PyShardReader::position)
      .def_property_readonly("size", &PyShardReader::size)
      .def_property_readonly("skipped", &PyShardReader::skipped);
  m.def("worker_sizes", &ferry::WorkerSizes, py::arg("url"), py::arg("seed"), py::arg("epoch"),
        py::arg("shuffle"), py::arg("rank"), py::arg("world_size"), py::arg("num_workers"));
  m.def("index_summary", &ferry::IndexSummary, py::arg("url"));
  m.def("resolve", &ferry::Resolve, py::arg("inputs"), py::arg("cache_dir") = "",
        py::arg("jobs") = 4);
  using ferry::sysmetrics::SystemSampler;
  py::class_<SystemSampler>(m, "SystemSampler")
      .def(py::init([](const std::string& disk_path) {
             return std::make_unique<SystemSampler>(
                 ferry::sysmetrics::SamplerOptions{.disk_path = disk_path});
           }),
           py::arg("disk_path") = "/")
      .def("sample",
           [](SystemSampler& s) {
             std::vector<std::pair<std::string, double>> out;
             {
               py::gil_scoped_release release;  // NVML calls may take milliseconds
               for (auto& metric : s.Sample())
                 out.emplace_back(std::move(metric.name), metric.value);
             }
             return out;
           })
      .def_property_readonly("gpu_note", &SystemSampler::gpu_note);
}
