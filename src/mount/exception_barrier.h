#pragma once
// The core of the FUSE adapter's exception barrier, without libfuse (so it is unit-tested): no
// C++ exception may unwind into libfuse's C frames, which would end the daemon with every open
// file. fuse_adapter.cc runs every callback through it and answers EIO when it fails.

#include <exception>

namespace ferry::mount {

// Logs that operation `op` failed with an exception described by `what`. Never throws.
void LogEscapedException(const char* op, const char* what) noexcept;

// Runs `body()`: true when it returned, false when an exception escaped it (logged; nothing
// leaves this function).
template <typename Body>
bool RunCatchingAll(const char* op, Body&& body) noexcept {
  try {
    body();
    return true;
  } catch (const std::exception& e) {
    LogEscapedException(op, e.what());
  } catch (...) {
    LogEscapedException(op, "not a std::exception");
  }
  return false;
}

}  // namespace ferry::mount
