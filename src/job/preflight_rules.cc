#include "job/preflight_rules.h"

#include <filesystem>

#include "base/strings.h"
#include "storage/url.h"

namespace ferry::job {

std::optional<std::string> TmpdirTooLong(std::string_view tmpdir) {
  // sun_path holds 108 bytes with the NUL; multiprocessing adds "/pymp-" + 8 and
  // "/listener-" + 8 (tempfile and its own random names).
  constexpr size_t kSunPath = 107, kAdded = 32;
  if (tmpdir.size() + kAdded <= kSunPath) return std::nullopt;
  return "TMPDIR '" + std::string(tmpdir) + "' is " + std::to_string(tmpdir.size()) +
         " characters: Python's multiprocessing cannot make its Unix sockets under it (at most " +
         std::to_string(kSunPath - kAdded) +
         "), so PyTorch DataLoader workers that hand tensors over hang; set a shorter TMPDIR";
}

namespace {

using Pair = std::pair<std::string, std::string>;

// How a pair reads in messages: as the user wrote it, secrets left out.
std::string Shown(const std::string& flag, const std::string& a, const std::string& b) {
  return flag + " '" + storage::RedactUrl(a) + "=" + storage::RedactUrl(b) + "'";
}

// A local side as a plain path: file:///p and file:/p become /p; plain paths stay as written
// (relative ones too: the command runs in ferry's working directory).
std::string PlainPath(const std::string& side) {
  if (!StartsWith(ToLower(side.substr(0, 5)), "file:")) return side;
  auto parsed = storage::ParseUrl(side);
  return parsed.ok() ? "/" + parsed->key : side;
}

// `text` split at its first or last '='; nullopt without one.
std::optional<Pair> SplitAt(const std::string& text, bool last) {
  size_t eq = last ? text.rfind('=') : text.find('=');
  if (eq == std::string::npos) return std::nullopt;
  return Pair{text.substr(0, eq), text.substr(eq + 1)};
}

// --out LOCAL_DIR=DST splits at the first '=', so a swapped `URL=/dir` whose URL holds '='
// (s3://b/x/date=2024) arrives cut in the URL: the swapped reading splits at the last one.
Status CheckOutput(const std::string& dir, const std::string& dst) {
  if (!IsLocalSide(dir)) {
    auto swapped = SplitAt(dir + "=" + dst, /*last=*/true);
    if (swapped && IsLocalSide(swapped->second) && !IsLocalSide(swapped->first) &&
        storage::ParseUrl(swapped->first).ok()) {
      return InvalidArgument(Shown("--out", dir, dst) +
                             ": the sides look swapped (the part before '=' must be a local "
                             "directory); write --out " +
                             storage::RedactUrl(swapped->second) + "=" +
                             storage::RedactUrl(swapped->first) + " (LOCAL_DIR=DST_URL)");
    }
    return InvalidArgument(Shown("--out", dir, dst) +
                           ": the part before '=' must be a local directory (LOCAL_DIR=DST_URL)");
  }
  return storage::ParseUrl(dst).status().WithContext("--out");
}

// --in SRC=LOCAL_DIR splits at the last '=' (SRC URLs may hold '='), so a swapped `/dir=URL`
// whose URL holds '=' arrives cut in the URL: the swapped reading splits at the first one. A
// local SRC (a local copy) is fine; a local SRC followed by a URL is not.
Status CheckInput(const std::string& src, const std::string& dir) {
  auto swapped = SplitAt(src + "=" + dir, /*last=*/false);
  if (swapped && IsLocalSide(swapped->first) && !IsLocalSide(swapped->second) &&
      storage::ParseUrl(swapped->second).ok()) {
    return InvalidArgument(Shown("--in", src, dir) +
                           ": the sides look swapped (the part after '=' must be a local "
                           "directory); write --in " +
                           storage::RedactUrl(swapped->second) + "=" +
                           storage::RedactUrl(swapped->first) + " (SRC_URL=LOCAL_DIR)");
  }
  FERRY_RETURN_IF_ERROR(storage::ParseUrl(src).status().WithContext("--in"));
  if (!IsLocalSide(dir)) {
    return InvalidArgument(Shown("--in", src, dir) +
                           ": the part after '=' must be a local directory (SRC=LOCAL_DIR)");
  }
  return Status();
}

// Whether `inner` is `outer` or lies below it; both absolute and normalised.
bool SameOrInside(std::string_view inner, std::string_view outer) {
  if (outer == "/") return true;
  return inner == outer || (StartsWith(inner, outer) && inner[outer.size()] == '/');
}

bool Fleeting(Persistence p) { return p == Persistence::kContainer || p == Persistence::kRam; }

}  // namespace

bool IsLocalSide(std::string_view side) {
  if (side.empty()) return false;
  auto parsed = storage::ParseUrl(side);
  return parsed.ok() && parsed->scheme == storage::Scheme::kLocal;
}

Result<RunOptions> CheckRunSides(RunOptions options) {
  for (auto& [src, dir] : options.inputs) {
    FERRY_RETURN_IF_ERROR(CheckInput(src, dir));
    dir = PlainPath(dir);
    if (IsLocalSide(src)) src = PlainPath(src);
  }
  for (auto& [dir, dst] : options.outputs) {
    FERRY_RETURN_IF_ERROR(CheckOutput(dir, dst));
    dir = PlainPath(dir);
  }
  return options;
}

std::string ResolveLocalDir(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path abs = fs::absolute(dir, ec);
  if (ec) return dir;
  fs::path resolved = fs::weakly_canonical(abs, ec);
  if (ec) resolved = abs.lexically_normal();
  std::string out = resolved.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Status CheckInputsApartFromOutputs(const RunOptions& options,
                                   const std::function<std::string(const std::string&)>& resolve) {
  for (const auto& [src, in_dir] : options.inputs) {
    const std::string in = resolve(in_dir);
    for (const auto& [out_dir, dst] : options.outputs) {
      const std::string out = resolve(out_dir);
      const std::string in_flag = Shown("--in", src, in_dir);
      const std::string out_flag = Shown("--out", out_dir, dst);
      if (in == out) {
        return InvalidArgument(in_flag + " and " + out_flag + " name the same directory '" + in +
                               "': every sync would upload the staged-in data as results; give "
                               "each its own directory");
      }
      if (SameOrInside(out, in)) {
        return InvalidArgument(out_flag + ": the output directory '" + out +
                               "' is inside the input directory '" + in + "' of " + in_flag +
                               ": results would mix with the staged-in data; give each its own "
                               "directory");
      }
      if (SameOrInside(in, out)) {
        return InvalidArgument(in_flag + ": the input directory '" + in +
                               "' is inside the output directory '" + out + "' of " + out_flag +
                               ": every sync would upload the staged-in data as results; give "
                               "each its own directory");
      }
    }
  }
  return Status();
}

std::optional<PersistenceFinding> OutputPersistence(
    const std::string& dir, const MountVerdict& dir_verdict, const std::string& dst,
    const std::optional<MountVerdict>& destination) {
  if (!destination || !Fleeting(destination->persistence)) return std::nullopt;
  if (Fleeting(dir_verdict.persistence)) {
    return PersistenceFinding{
        .error = true,
        .line = "output " + dir + ": it is on " + dir_verdict.kind + " and its destination " +
                storage::RedactUrl(dst) + " is local and on " + destination->kind +
                ": the results would not outlive the job; send them to a remote URL (s3://...) "
                "or a persistent filesystem"};
  }
  return PersistenceFinding{.error = false,
                            .line = "output destination " + storage::RedactUrl(dst) + " is on " +
                                    destination->kind + ": " + destination->verdict};
}

}  // namespace ferry::job
