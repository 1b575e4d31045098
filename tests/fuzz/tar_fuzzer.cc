// libFuzzer target: the streaming tar parser (shard/tar.h) under any chunking.
// Properties: never crashes; the entries seen do not depend on how the stream is split.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "shard/tar.h"

namespace {

struct Seen {
  std::vector<std::string> names;
  std::string data;
  ferry::Status status;
};

Seen Parse(std::string_view stream, size_t chunk) {
  Seen seen;
  ferry::shard::TarParser parser({.on_entry =
                                      [&](const ferry::shard::TarEntry& e) {
                                        seen.names.push_back(e.name);
                                        return ferry::Status();
                                      },
                                  .on_data =
                                      [&](std::string_view d) {
                                        if (seen.data.size() < (1 << 20)) seen.data.append(d);
                                        return ferry::Status();
                                      },
                                  .on_end_of_entry = [] { return ferry::Status(); }});
  for (size_t pos = 0; pos < stream.size() && seen.status.ok(); pos += chunk) {
    seen.status = parser.Feed(stream.substr(pos, chunk));
  }
  if (seen.status.ok()) seen.status = parser.Finish();
  return seen;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  size_t chunk = 1 + data[0] % 97;
  std::string_view stream(reinterpret_cast<const char*>(data) + 1, size - 1);
  Seen whole = Parse(stream, stream.size() + 1);
  Seen pieces = Parse(stream, chunk);
  if (whole.status.ok() != pieces.status.ok()) std::abort();
  if (whole.status.ok() && (whole.names != pieces.names || whole.data != pieces.data)) {
    std::abort();
  }
  return 0;
}
