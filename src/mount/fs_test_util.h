#pragma once
// Helpers for tests that drive MountFs directly (fs_test.cc, fs_model_test.cc).

#include <fcntl.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mount/fs.h"

namespace ferry::mount::testing {

// Every name a full listing of directory `ino` returns, in order ("." and ".." first).
inline std::vector<std::string> ListNames(MountFs& fs, Ino ino) {
  auto dh = fs.OpenDir(ino);
  EXPECT_TRUE(dh.has_value());
  if (!dh) return {};
  std::vector<std::string> names;
  EXPECT_TRUE(fs.ReadDir(*dh, 0, [&](const std::string& n, const Attr&, uint64_t) {
                  names.push_back(n);
                  return true;
                }).has_value());
  fs.ReleaseDir(*dh);
  return names;
}

// The whole file `ino`: opened for reading, read in `chunk`-byte reads, released.
inline std::string ReadFile(MountFs& fs, Ino ino, size_t chunk) {
  auto r = fs.Open(ino, O_RDONLY);
  EXPECT_TRUE(r.has_value());
  if (!r) return "";
  std::string out;
  for (uint64_t off = 0;;) {
    auto d = fs.Read(r->fh, off, chunk);
    EXPECT_TRUE(d.has_value());
    if (!d || d->empty()) break;
    out += *d;
    off += d->size();
  }
  fs.Release(r->fh);
  return out;
}

}  // namespace ferry::mount::testing
