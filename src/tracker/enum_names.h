#pragma once
// The wire names of the model's enums (MLflow's service.proto): "RUNNING", "active",
// "ACTIVE_ONLY"... Parsers accept the name (case-insensitive) or the proto number as text.

#include <optional>
#include <string_view>

#include "tracker/model.h"

namespace ferry::tracker {

std::string_view RunStatusName(RunStatus status);
std::optional<RunStatus> ParseRunStatus(std::string_view text);

std::string_view LifecycleStageName(LifecycleStage stage);  // "active" / "deleted"

std::string_view ViewTypeName(ViewType view);
std::optional<ViewType> ParseViewType(std::string_view text);

}  // namespace ferry::tracker
