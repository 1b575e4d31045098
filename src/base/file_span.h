#pragma once
// FileSpan: `length` bytes of the open file `fd` from `offset`, for bodies that lie in a file
// and go out with sendfile(2) (proxy::BlobReader::NextFileSpan, server::BodySource::NextFileSpan).

#include <cstddef>
#include <cstdint>

namespace ferry {

struct FileSpan {
  int fd = -1;
  uint64_t offset = 0;
  size_t length = 0;
};

}  // namespace ferry
