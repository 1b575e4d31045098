#pragma once
// MemoryTrackerStore: the reference TrackerStore (tracker/tracker_store.h). Everything lives in
// maps under one mutex; simple enough to be obviously right, which is its job: the REST layer's
// handler tests run on it and the conformance suite (tracker/testing) holds it to the same rules
// as the SQLite and PostgreSQL backends. Nothing survives the process, so the durability rule
// does not apply. Thread-safe.

#include <memory>

#include "tracker/tracker_store.h"

namespace ferry::tracker {

std::shared_ptr<TrackerStore> MakeMemoryTrackerStore();

}  // namespace ferry::tracker
