#include "tracker/enum_names.h"

#include "base/strings.h"

namespace ferry::tracker {

std::string_view RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kRunning:
      return "RUNNING";
    case RunStatus::kScheduled:
      return "SCHEDULED";
    case RunStatus::kFinished:
      return "FINISHED";
    case RunStatus::kFailed:
      return "FAILED";
    case RunStatus::kKilled:
      return "KILLED";
  }
  return "RUNNING";
}

std::optional<RunStatus> ParseRunStatus(std::string_view text) {
  for (RunStatus s : {RunStatus::kRunning, RunStatus::kScheduled, RunStatus::kFinished,
                      RunStatus::kFailed, RunStatus::kKilled}) {
    if (EqualsIgnoreCase(text, RunStatusName(s)) || text == std::to_string(static_cast<int>(s))) {
      return s;
    }
  }
  return std::nullopt;
}

std::string_view LifecycleStageName(LifecycleStage stage) {
  return stage == LifecycleStage::kDeleted ? "deleted" : "active";
}

std::string_view ViewTypeName(ViewType view) {
  switch (view) {
    case ViewType::kActiveOnly:
      return "ACTIVE_ONLY";
    case ViewType::kDeletedOnly:
      return "DELETED_ONLY";
    case ViewType::kAll:
      return "ALL";
  }
  return "ACTIVE_ONLY";
}

std::optional<ViewType> ParseViewType(std::string_view text) {
  for (ViewType v : {ViewType::kActiveOnly, ViewType::kDeletedOnly, ViewType::kAll}) {
    if (EqualsIgnoreCase(text, ViewTypeName(v)) || text == std::to_string(static_cast<int>(v))) {
      return v;
    }
  }
  return std::nullopt;
}

}  // namespace ferry::tracker
