// The ferry binary: everything lives in libraries; main only hands over to the CLI.
#include "cli/app.h"

int main(int argc, char** argv) { return ferry::cli::RunFerry(argc, argv); }
