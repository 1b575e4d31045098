// libFuzzer target: the ferry run job spec parser (job/spec.h: YAML or JSON through yaml-cpp).
// Property: never crashes or throws; every problem is a Status naming the file.
#include <cstdint>
#include <string_view>

#include "job/spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ferry::job::ParseJobSpec(text, "fuzz.yaml");
  return 0;
}
