#pragma once
// STS wire formats (XML answers of AssumeRoleWithWebIdentity and errors).

#include <string>
#include <string_view>

#include "aws/credentials.h"

namespace ferry::aws {

Result<Credentials> ParseAssumeRoleWithWebIdentityResponse(std::string_view xml);

// "Code: Message" from an STS/S3 <Error> body, or "" when none is found.
std::string ParseStsError(std::string_view xml);

}  // namespace ferry::aws
