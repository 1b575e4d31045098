#pragma once
// `ferry run --resume DIR`: before the command starts, the job's newest complete checkpoint set
// (the rank's `latest` pointer, job_records.h, and the manifest it names) is copied into DIR and
// every file checked against the manifest's size and CRC32C. Nothing to resume (the job's first
// attempt) is not an error. docs/semantics/run.md, "Attempts and resume".

#include <atomic>
#include <optional>
#include <string>

#include "base/status.h"
#include "job/manifest.h"
#include "storage/registry.h"

namespace ferry::job {

// Reads the pointer at `pointer_url` and the manifest it names. nullopt when there is no pointer.
// A pointer or manifest of another job, or one that cannot be read or parsed, is an error.
Result<std::optional<ResumeSource>> FindResumeSource(storage::StoreRegistry& registry,
                                                     const std::string& pointer_url,
                                                     const std::string& job);

struct StagedResume {
  uint64_t files = 0, copied = 0, unchanged = 0, bytes = 0;
};

// Copies every file of `source` into the local directory `dir` (files already there with the
// same content are kept; other files in `dir` are left alone) and checks each against the
// manifest. Errors name the file; `cancel` stops it within about a second (kCancelled).
Result<StagedResume> StageResume(storage::StoreRegistry& registry, const ResumeSource& source,
                                 const std::string& dir, const std::atomic<bool>& cancel);

}  // namespace ferry::job
