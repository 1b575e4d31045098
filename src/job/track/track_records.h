#pragma once
// The pure parts of `ferry run --track` (run_tracker.h): what is kept in the job's records to
// re-attach a later attempt to the same tracking run, the checkpoints manifest artifact, the
// run's tags and final status. Unit-tested in track_records_test.cc.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "job/manifest.h"
#include "job/run_plan.h"

namespace ferry::job::track {

// Beside the job's `latest` pointers (job_records.h): `tracking.json` for rank 0,
// `tracking-rank<R>.json` for the others.
std::string TrackingRecordName(const std::string& rank);

struct TrackingRecord {
  std::string url;  // the tracking server, as given to --track
  std::string run_id, experiment_id, experiment;
};
std::string TrackingRecordJson(const TrackingRecord& r);
// nullopt when `text` is not a tracking record.
std::optional<TrackingRecord> ParseTrackingRecord(const std::string& text);

// One output's newest complete set, as its manifest lists it.
struct CheckpointSet {
  std::string destination;   // the output's expanded destination URL (a directory)
  std::string manifest_url;  // DST/_ferry/manifest*.json
  ResumeSource manifest;     // parsed (files, attempt, state, written_at)
};

// The artifact `ferry/checkpoints.json`: where every file of every output's newest set is
// (URL, size, CRC32C, status), when it was synced and by which attempt. Files are referenced,
// never uploaded again.
std::string CheckpointsJson(const std::vector<CheckpointSet>& sets, const RunIdentity& id);

// The tags of a new tracking run, and of a re-attached one (ferry.attempt changes):
// mlflow.source.name (the command's program), mlflow.user, mlflow.source.git.commit (when `cwd`
// is in a git work tree), ferry.host, ferry.job, ferry.rank, ferry.attempt, ferry.command (the
// command line, secrets redacted).
std::vector<std::pair<std::string, std::string>> RunTags(const RunPlan& plan,
                                                         const std::string& host,
                                                         const std::string& user,
                                                         const std::string& cwd);

// The command line as tags and logs show it: the value of an argument whose name says it is a
// secret (`--api-key=V`, `--token V`, `DB_PASSWORD=V`: secret, token, password, api key,
// credential, access key, private) is [REDACTED], and so is whatever Redact() knows.
std::string RedactCommandLine(const std::vector<std::string>& argv);

// The commit checked out in the git work tree holding `dir` (.git/HEAD, a loose ref or
// packed-refs; a .git file of a worktree or submodule is followed); nullopt when none.
std::optional<std::string> GitCommit(const std::string& dir);

// The tracking run's final status: FINISHED (ferry exits 0), KILLED (ferry was asked to stop
// and passed it on, or the command was killed by a signal), else FAILED.
std::string FinalStatus(const ChildState& child, int exit_code);

// The tag saying when attempt `attempt` began, in ms since the epoch:
// "ferry.attempt.<N>.started_ms"
// ("0" for an unknown attempt), set by every attempt on the run it creates or continues.
std::string AttemptStartedTag(const std::string& attempt);

// The artifact path of the output log of `attempt`: ferry/output.log for attempt 0 (and an
// unknown one), ferry/output-attempt<N>.log for later attempts, so a resumed run keeps each.
std::string OutputLogArtifact(const std::string& attempt);

}  // namespace ferry::job::track
