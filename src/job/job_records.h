#pragma once
// Where `ferry run` keeps what belongs to a job rather than to one attempt: the `latest`
// pointers (per rank) and the attempt claims. Never shared between jobs, so a job can only ever
// resume its own checkpoints (docs/semantics/run.md, "Attempts and resume").
//
// The records live beside the first output's destination, under the template's part before its
// first field other than {job}:
//
//   s3://b/runs/{job}/{attempt}/   ->  s3://b/runs/JOB/_ferry/
//   s3://b/runs/{job}-{attempt}/   ->  s3://b/runs/_ferry/jobs/JOB/     ({job} not in that part)
//   s3://b/ckpt/                   ->  s3://b/ckpt/_ferry/jobs/JOB/
//
// Attempts count by themselves: a run that is not told its attempt (SLURM_RESTART_COUNT,
// TORCHELASTIC_RESTART_COUNT) claims the next number by writing
// `attempts/rank<R>/<N>.<token>.json` and listing `<N>.*` again: it holds N only when its claim
// is the only one there. Two runs that race cannot both hold N (each lists after its own write;
// the later list sees the other's claim), both may lose and move on, leaving a gap. Needs a store
// whose listings show completed writes (S3 has been strongly consistent since 2020, Ceph RGW
// and local directories are).

#include <chrono>
#include <functional>
#include <string>

#include "base/status.h"
#include "job/run.h"
#include "storage/store.h"

namespace ferry::job {

// The records' key in the destination's store (ends with '/'), for the output template `tmpl`.
// Errors: a template that cannot be parsed or expanded.
Result<std::string> JobRecordsKey(const std::string& tmpl, const RunIdentity& id);

// The latest pointer of output `output` (0-based) of `rank`: `latest.json` for the first output of
// rank 0, else `latest[-out<I>][-rank<R>].json`.
std::string LatestPointerName(const std::string& rank, size_t output);
// A destination's manifest: `manifest.json` for rank 0, `manifest-rank<R>.json` for the others,
// so the ranks of one job may share a destination.
std::string ManifestName(const std::string& rank);

struct AttemptClaimOptions {
  std::string token;    // unique to this run (host, pid, random)
  std::string details;  // the claim's contents (JSON: who, when)
  int max_tries = 20;
  // Waits between lost races (randomised by the caller); tests pass a no-op.
  std::function<void(int try_number)> back_off;
};

// Claims this run's attempt number for `rank` under `records_key` (JobRecordsKey): one more than
// the highest claimed so far, 0 for the first. Errors name the records' URL.
Result<int> ClaimAttempt(storage::Store& store, const std::string& records_key,
                         const std::string& rank, const AttemptClaimOptions& options);

}  // namespace ferry::job
