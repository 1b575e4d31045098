// ferry mb s3://bucket: creates a bucket (an existing bucket of yours is not an error).

#include "aws/credential_chain.h"
#include "aws/endpoint.h"
#include "cli/command.h"
#include "http/http_client.h"
#include "storage/s3/s3_store.h"
#include "storage/url.h"

namespace ferry::cli {

namespace {

std::string Param(const storage::ParsedUrl& u, const char* name) {
  auto it = u.params.find(name);
  return it == u.params.end() ? "" : it->second;
}

Status RunMb(Context& ctx, const std::string& url) {
  FERRY_ASSIGN_OR_RETURN(auto parsed, storage::ParseUrl(url));
  if (parsed.scheme != storage::Scheme::kS3)
    return InvalidArgument("mb: '" + url + "' is not an s3:// URL");
  if (!parsed.key.empty())
    return InvalidArgument("mb: '" + url + "' names a key; give only s3://bucket");
  FERRY_ASSIGN_OR_RETURN(
      auto ep, aws::ResolveS3Endpoint(*ctx.env, {.bucket = parsed.bucket,
                                                 .endpoint = Param(parsed, "endpoint"),
                                                 .region = Param(parsed, "region"),
                                                 .addressing = Param(parsed, "addressing"),
                                                 .profile = Param(parsed, "profile")}));
  http::ClientOptions ho;
  ho.ca_bundle = ctx.env->GetOr("AWS_CA_BUNDLE", "");
  storage::S3StoreOptions opts{.bucket = parsed.bucket,
                               .endpoint = ep,
                               .credentials = aws::MakeDefaultCredentialsChain(
                                   {.env = ctx.env, .profile = Param(parsed, "profile")}),
                               .http = std::make_shared<http::Client>(ho)};
  FERRY_RETURN_IF_ERROR(storage::CreateS3Bucket(opts));
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
