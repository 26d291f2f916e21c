// The `runrun` command: see launcher_main.h and docs/launcher.md.
#include "launcher/launcher_main.h"

int main(int argc, char** argv) { return runrun::launcher::launcher_main(argc, argv); }
