#pragma once
// `ferry track sync DIR`: uploads the on-disk spool that the Python client `ferry.track` leaves
// behind (an offline run, or an online run whose server was unreachable when it finished).
// The spool format is ferry.track's (python/ferry/_track_spool.py): meta.json (run_id or null
// for an offline run, project, name, config, start_time, tags, and once finished: status,
// end_time, summary, exit_code, attached), batch-NNNNNNNN.jsonl files of points
// ({"k","v","t","s"} per line; v a number or "NaN"/"Infinity"/"-Infinity") and
// image-NNNNNNNN.bin files with the artifact name in image-NNNNNNNN.name, sent oldest first.
//
// Semantics match `python3 -m ferry.track sync` (docs/semantics/mlflow.md): an offline run is
// created (its id written to meta.json at once, so a second sync after a failure reuses it) and
// gets its params; each batch file is deleted after the server acknowledged it, each image after
// its verified upload; a finished run gets its summary tags, ferry.exit_code and status (a run
// that was attached to someone else's keeps its status); the directory is removed when nothing is
// left. Resending a batch duplicates nothing (the server drops equal points). Retryable failures
// are retried with backoff for up to `retry_for`, and the first retry is reported through `note`.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tracker/client/mlflow_client.h"

namespace ferry::tracker::client {

struct SpoolSyncOptions {
  std::chrono::milliseconds retry_for{60000};
  std::function<void(const std::string&)> note;  // progress and retry lines; may be empty
};

// The run directories under `dir`: `dir` itself when it holds meta.json, else its children
// that do. kNotFound when there is none.
Result<std::vector<std::filesystem::path>> SpoolRunDirs(const std::filesystem::path& dir);

// Uploads one run's spool; returns the run id.
Result<std::string> SyncSpool(MlflowClient& client, const std::filesystem::path& run_dir,
                              const SpoolSyncOptions& options = {});

}  // namespace ferry::tracker::client
