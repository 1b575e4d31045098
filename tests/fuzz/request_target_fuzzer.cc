// libFuzzer target: the server's request-target validation (server/path.h), the one gate
// between a client's bytes and every handler's path.
// Properties: never crashes; an accepted path starts with '/', has no ".", ".." or empty
// segment (except one trailing '/'), and no backslash, NUL or control byte.
#include <cstdint>
#include <string_view>

#include "server/path.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view target(reinterpret_cast<const char*>(data), size);
  auto parsed = ferry::server::ParseTarget(target);
  if (!parsed.ok()) return 0;
  const std::string& p = parsed->path;
  if (p.empty() || p[0] != '/') __builtin_trap();
  for (unsigned char c : p) {
    if (c < 0x20 || c == 0x7f || c == '\\') __builtin_trap();
  }
  size_t start = 1;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string_view seg(p.data() + start, end - start);
    if (seg == "." || seg == "..") __builtin_trap();
    if (seg.empty() && end != p.size()) __builtin_trap();
    start = end + 1;
  }
  return 0;
}
