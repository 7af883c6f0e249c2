//===- OptionValues.h - checked command-line option values -------*- C++
//-*-===//
//
// The runtime tools' option values, with the same messages everywhere:
// "--steps needs a positive integer, found 'x'". No MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_OPTIONVALUES_H
#define TANDEM_RUNTIME_OPTIONVALUES_H

#include <cstdint>
#include <string>

namespace tandem::runtime {

/// A non-negative decimal integer; `option` names the flag in the error.
bool parseCount(const std::string &option, const std::string &text,
                uint64_t &out, std::string &error);

/// A decimal integer of at least 1: "--steps needs a positive integer,
/// found '0'".
bool parsePositiveCount(const std::string &option, const std::string &text,
                        uint64_t &out, std::string &error);

/// A positive number.
bool parsePositive(const std::string &option, const std::string &text,
                   double &out, std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_OPTIONVALUES_H
