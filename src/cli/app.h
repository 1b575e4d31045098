#pragma once
// The ferry command line: parses arguments, wires stores, runs one subcommand.

namespace ferry::cli {

// Returns the process exit code: 0 ok, 1 failure, 2 usage error.
int RunFerry(int argc, char** argv);

}  // namespace ferry::cli
