#include "job/trigger_file.h"

#include <unistd.h>

#include <cstdio>

#include "base/redact.h"

namespace ferry::job {

void TriggerFile::RemoveStale() const { ::unlink(path_.c_str()); }

bool TriggerFile::Requested() const { return ::access(path_.c_str(), F_OK) == 0; }

void TriggerFile::ClearFailed() const { ::unlink(failed_path().c_str()); }

void TriggerFile::Answer(const Status& synced) const {
  ClearFailed();
  if (!synced.ok()) {
    if (FILE* f = std::fopen(failed_path().c_str(), "w")) {
      std::fprintf(f, "%s\n", Redact(synced.message()).c_str());
      std::fclose(f);
    }
  }
  ::unlink(path_.c_str());
}

}  // namespace ferry::job
