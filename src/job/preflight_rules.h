#pragma once
// Mistakes in how a run's inputs and outputs are written, caught before anything is created,
// staged in or started (docs/semantics/run.md, "Mistakes caught before anything runs").
//
// Usage errors (exit 2), checked whatever --no-preflight says, one line each naming the flag as
// written and what is expected:
//   CheckRunSides       every URL parses strictly; the local side of --in/--out is a local path,
//                       never a URL, and when the two sides look swapped (`--out s3://b/x/=/o`,
//                       `--in /data=s3://b/ds`) the message shows them the right way round
//   CheckInputsApartFromOutputs
//                       no --in directory inside an --out directory, no --out directory inside
//                       an --in directory, and no directory that is both
// A preflight rule (an error line in the preflight block, exit 1; --no-preflight skips it):
//   OutputPersistence   an output directory on a filesystem that vanishes with the container or
//                       the machine (overlay, tmpfs) whose destination is local and just as
//                       fleeting: the results would not survive the job
// A preflight warning:
//   TmpdirTooLong       a TMPDIR too long for the Unix sockets Python's multiprocessing makes
//                       under it (PyTorch's DataLoader workers hand tensors over through one)
//
// Pure functions of their arguments (CheckInputsApartFromOutputs resolves paths through the
// function it is given), so each rule is unit-tested without a filesystem.

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "job/mountinfo.h"
#include "job/run.h"

namespace ferry::job {

// Whether `side` names a local path: a plain path or a file:// URL. Anything with a scheme
// (s3://, gs://, https://) or a scheme typo (s3:/b, s3:b) does not.
bool IsLocalSide(std::string_view side);

// Checks the sides of every input and output (kInvalidArgument naming the first mistake) and
// returns the options with file:// local sides written as plain paths, so no directory is ever
// created under a name like "file:" or "s3:".
Result<RunOptions> CheckRunSides(RunOptions options);

// The absolute path of a local directory with "." and ".." removed and the symbolic links of
// its existing part resolved (nothing is created).
std::string ResolveLocalDir(const std::string& dir);

// kInvalidArgument when an input directory and an output directory are the same or one lies
// inside the other. `resolve` makes each directory comparable (ResolveLocalDir; tests pass their
// own). Only --in directories are compared with --out directories.
Status CheckInputsApartFromOutputs(
    const RunOptions& options,
    const std::function<std::string(const std::string&)>& resolve = ResolveLocalDir);

// The warning line when `tmpdir` leaves no room for multiprocessing's socket path
// (TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX, at most 107 bytes): there, a DataLoader worker's
// batch fails to pickle in a queue feeder thread ("AF_UNIX path too long"), is dropped, and the
// training waits for it forever.
std::optional<std::string> TmpdirTooLong(std::string_view tmpdir);

// The preflight's finding about where one output's results live: an error when the output dir
// is on a fleeting filesystem (Persistence kContainer or kRam) and its destination is local and
// fleeting too; the warning ferry has always given when only a local destination is fleeting;
// nothing otherwise. `destination` is absent when the destination is not local (s3://).
struct PersistenceFinding {
  bool error = false;
  std::string line;
};
std::optional<PersistenceFinding> OutputPersistence(const std::string& dir,
                                                    const MountVerdict& dir_verdict,
                                                    const std::string& dst,
                                                    const std::optional<MountVerdict>& destination);

}  // namespace ferry::job
