#pragma once
// An in-memory store for unit tests and as the reference model in conformance tests.

#include <memory>

#include "storage/store.h"

namespace ferry::storage {

std::shared_ptr<Store> MakeMemoryStore(std::string name = "test");

}  // namespace ferry::storage
