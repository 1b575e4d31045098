// ferry._native: the C++ shard reader (src/shard) for Python. Thin: ferry/data.py builds the
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
    py::dict d;
    d["__key__"] = py::str((*s)->key);
    for (auto& [ext, data] : (*s)->files) d[py::str(ext)] = py::bytes(data);
    return d;
  }

  uint64_t position() const { return reader_->position(); }
  uint64_t size() const { return reader_->size(); }
  uint64_t skipped() const { return reader_->skipped(); }

 private:
  std::unique_ptr<storage::StoreRegistry> registry_;
  std::unique_ptr<shard::ShardReader> reader_;
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
      .def_property_readonly("position", &PyShardReader::position)
      .def_property_readonly("size", &PyShardReader::size)
      .def_property_readonly("skipped", &PyShardReader::skipped);
  m.def("worker_sizes", &ferry::WorkerSizes, py::arg("url"), py::arg("seed"), py::arg("epoch"),
        py::arg("shuffle"), py::arg("rank"), py::arg("world_size"), py::arg("num_workers"));
  m.def("index_summary", &ferry::IndexSummary, py::arg("url"));
}
