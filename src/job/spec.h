#pragma once
// Job spec files for `ferry run --spec FILE`: the same settings as the flags, in YAML (so JSON
// works too). Unknown keys are errors, so a typo never silently drops a setting.
//
//   command: [python, train.py, --epochs, "10"]   # or one string, run by /bin/sh -c
//   inputs:  [{src: "s3://bucket/datasets/imagenet/", dir: /scratch/data}]   # or "SRC=DIR"
//   outputs: [{dir: /scratch/out, dst: "s3://bucket/runs/{job}/{attempt}/"}] # or "DIR=DST"
//   interval: 300        # seconds between checkpoint syncs
//   grace: 30            # seconds from SIGTERM (the command's main process) to SIGKILL (its group)
//   signal_group: false  # SIGTERM to the whole process group at once (--signal-group)
//   strict: false        # preflight warnings are fatal
//   preflight: true
//   delete_after_upload: ["ckpt-*.pt"]                  # or one glob
//   trigger_file: /scratch/sync-now

#include <string>
#include <string_view>

#include "base/status.h"
#include "job/run.h"

namespace ferry::job {

// `name` names the file in errors.
Result<RunOptions> ParseJobSpec(std::string_view text, std::string_view name);
Result<RunOptions> LoadJobSpec(const std::string& path);

}  // namespace ferry::job
