// The doctest main of every test executable (unit, e2e, live, stress).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
