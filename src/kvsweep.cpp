#include "kvsweep/cli/main.hpp"

int main(int argc, char** argv) { return kvsweep::cli::main(argc, argv); }
