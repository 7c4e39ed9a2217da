// The one doctest main for all unit tests (one binary, as ninja_test).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
