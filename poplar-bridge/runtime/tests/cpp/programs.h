// Poplar programs of the tutorials' kind run by tests/runtime.rs (see programs.cpp).
#pragma once
#include <string>

namespace foam_selftest {
std::string streamsAndPrints();
std::string implicitExchange(bool summary);
std::string writeConflict(bool acrossTiles);
std::string readWriteConflict();
std::string loadRefused(const std::string &which);
std::string streamError(const std::string &which);
std::string tileMapping();
} // namespace foam_selftest
