#pragma once
// The one translation from errno values to Status.

#include <string_view>

#include "base/status.h"

namespace ferry {

// `what` names the operation and path, e.g. "open '/data/x'".
Status ErrnoToStatus(int err, std::string_view what);

}  // namespace ferry
