// SHA-256 of multipart upload parts: Ferry's four interleaved SHA-NI streams (base/sha256_ni.h,
// what `ferry cp` uses for a local file's parts to S3) against the peer, OpenSSL's SHA-256 one
// part at a time (what each sending thread did before, and what other clients do). Prints both
// throughputs, their ratio and whether the digests agree. Pin it to one core:
//   taskset -c 1 build/release/sha256_parts_bench [PART_MIB] [PARTS] [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "base/hash.h"
#include "base/sha256_lanes.h"
#include "base/sha256_ni.h"

int main(int argc, char** argv) {
  using ferry::Sha256Digest;
  const size_t part = (argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 8) << 20;
  const size_t count = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 16;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 5;
  if (!ferry::HaveSha256Ni()) {
    std::fprintf(stderr, "sha256_parts_bench: this CPU has no SHA extensions\n");
    return 1;
  }
  std::mt19937_64 rng(3);
  std::vector<std::string> parts(count, std::string(part, '\0'));
  for (auto& p : parts) std::generate(p.begin(), p.end(), [&] { return static_cast<char>(rng()); });
  std::vector<std::string_view> views(parts.begin(), parts.end());
  const double gb = static_cast<double>(part * count) / 1e9;
  auto seconds = [](auto a, auto b) { return std::chrono::duration<double>(b - a).count(); };
  std::vector<double> peer, ferry;
  bool same = true;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<Sha256Digest> one_by_one;
    for (auto v : views) one_by_one.push_back(ferry::Sha256(v));
    auto t1 = std::chrono::steady_clock::now();
    std::vector<Sha256Digest> interleaved = ferry::Sha256Each(views);
    auto t2 = std::chrono::steady_clock::now();
    peer.push_back(gb / seconds(t0, t1));
    ferry.push_back(gb / seconds(t1, t2));
    same = same && one_by_one == interleaved;
  }
  std::sort(peer.begin(), peer.end());
  std::sort(ferry.begin(), ferry.end());
  const double p = peer[peer.size() / 2], f = ferry[ferry.size() / 2];
  std::printf(
      "%zu parts of %zu MiB, median of %d: OpenSSL one by one %.2f GB/s, Ferry "
      "(4 SHA-NI streams) %.2f GB/s = %.2fx; digests %s\n",
      count, part >> 20, repeats, p, f, f / p, same ? "equal" : "DIFFER");
  return same ? 0 : 1;
}
