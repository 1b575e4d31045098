// libFuzzer target: the AWS shared config / credentials INI parser (aws/shared_config.h).
#include <cstdint>
#include <string_view>

#include "aws/shared_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)ferry::aws::ParseIni(text);
  return 0;
}
