// ferry mb s3://bucket: creates a bucket (an existing bucket of yours is not an error).

#include "backends/backends.h"
#include "cli/command.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

Status RunMb(Context& ctx, const std::string& url) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, ParseUrlArg(ctx, url));
  if (parsed.scheme != storage::Scheme::kS3) {
    return Usage(ctx, InvalidArgument("mb: '" + storage::RedactUrl(url) + "' is not an s3:// URL"));
  }
  if (!parsed.key.empty()) {
    return Usage(ctx, InvalidArgument("mb: '" + storage::RedactUrl(url) +
                                      "' names a key; give only s3://bucket"));
  }
  FERRY_RETURN_IF_ERROR(backends::CreateBucket(parsed, ctx.backend_options));
  return Print(ctx, "bucket " + parsed.bucket + " ready\n");
}

}  // namespace

void AddMbCommand(CLI::App& app, Action& action) {
  auto url = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand("mb", "Create an S3 bucket");
  cmd->add_option("url", *url, "s3://bucket")->required();
  cmd->callback([url, &action] { action = [url](Context& ctx) { return RunMb(ctx, *url); }; });
}

}  // namespace ferry::cli
