#pragma once
#include "rust/cxx.h"
namespace foam_selftest {
rust::String run_scenario(rust::Str name, unsigned threads);
}
