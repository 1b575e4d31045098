#pragma once
// The manifest `ferry run` writes last at a destination after every sync
// (`_ferry/manifest.json`, `_ferry/manifest-rank<R>.json` for other ranks), and the job's
// `latest` pointer to it. A manifest lists exactly the files this run uploaded or verified at
// that destination, with their CRC32C; its presence says they form a complete set. The format is
// docs/semantics/run.md ("Manifest").

#include <sys/types.h>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "job/run.h"

namespace ferry::job {

// The command as the manifest reports it.
struct ChildState {
  pid_t pid = -1;
  bool running = false;
  int exit_code = -1;        // 0-255, or 128+signal
  std::string how;           // "exited 3", "killed by signal 9"
  bool interrupted = false;  // ferry was asked to stop and passed it on
};

// A file a sync left out, as listed under "skipped" in the manifest.
struct SkippedFile {
  std::string path;    // relative to the output directory
  std::string reason;  // "changed while being copied", "vanished ...", "cannot be read: ..."
};

struct ManifestFile {
  std::string path;  // relative to the destination (and the output directory)
  uint64_t size = 0;
  std::optional<uint32_t> crc32c;
  // "uploaded" (by this sync), "unchanged" (found identical at the destination: size and
  // CRC32C), "kept" (uploaded by an earlier sync of this run, then deleted locally by
  // --delete-after-upload).
  std::string status;
};

// What a run resumed from (the lineage recorded in its manifests).
struct ResumeSource {
  std::string manifest_url;  // the manifest of the set
  std::string url;           // the destination that holds it
  std::string run_id, attempt, written_at, state;
  bool final = false;
  std::vector<ManifestFile> files;
};

// An entry the listing left out by rule (a link out of the output directory, a loop, a special
// file): recorded, never uploaded.
struct LeftOutEntry {
  std::string path, reason, target;
};

struct ManifestContents {
  const RunIdentity& id;
  const RunOptions& options;
  const ChildState& child;
  bool final_sync = false;
  std::string written_at;
  std::vector<ManifestFile> files;
  std::vector<SkippedFile> skipped;
  std::vector<LeftOutEntry> left_out;
  const std::optional<ResumeSource>& resumed_from;
};

// The state a manifest and a pointer report: "running", "succeeded", "failed" (non-zero exit),
// "killed" (a signal it did not get from ferry), "interrupted" (ferry was asked to stop and
// forwarded it).
std::string ManifestState(const ChildState& child);

// The manifest's JSON text.
std::string ManifestJson(const ManifestContents& m);

// The pointer's JSON text: the set's destination and manifest, who wrote it, its state and,
// once the command has ended, its exit status.
std::string PointerJson(const std::string& url, const std::string& manifest_url,
                        const RunIdentity& id, const ChildState& child, bool final_sync,
                        const std::string& written_at);

// Parses a pointer's text: the manifest URL it names. Errors name `where`.
Result<std::string> PointerManifest(const std::string& text, const std::string& where);

// Who wrote a manifest (any format): its run_id and attempt; nullopt when it is not one.
std::optional<std::pair<std::string, std::string>> ManifestOwner(const std::string& text);

// Parses a manifest's text (written by this or an earlier ferry). Errors name `where`.
Result<ResumeSource> ParseManifest(const std::string& text, const std::string& where);

}  // namespace ferry::job
