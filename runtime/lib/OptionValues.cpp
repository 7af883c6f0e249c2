//===- OptionValues.cpp - checked command-line option values --------------===//

#include "tandem/Runtime/OptionValues.h"

#include <cstdlib>

bool tandem::runtime::parseCount(const std::string &option,
                                 const std::string &text, uint64_t &out,
                                 std::string &error) {
  char *end = nullptr;
  out = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end || text[0] == '-') {
    error = option + " needs a non-negative integer, found '" + text + "'";
    return false;
  }
  return true;
}

bool tandem::runtime::parsePositiveCount(const std::string &option,
                                         const std::string &text, uint64_t &out,
                                         std::string &error) {
  if (parseCount(option, text, out, error) && out > 0)
    return true;
  error = option + " needs a positive integer, found '" + text + "'";
  return false;
}

bool tandem::runtime::parsePositive(const std::string &option,
                                    const std::string &text, double &out,
                                    std::string &error) {
  char *end = nullptr;
  out = std::strtod(text.c_str(), &end);
  if (text.empty() || *end || !(out > 0)) {
    error = option + " needs a positive number, found '" + text + "'";
    return false;
  }
  return true;
}
