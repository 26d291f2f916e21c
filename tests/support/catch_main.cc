// The one main() of every Catch2 test binary (Catch2 v2 from Debian).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
