//===- TargetCommandLine.h - target options on a command line ---*- C++ -*-===//
//
// The drivers (tandemc, tandemc lower, tandem-translate) take `--target` and
// the options of every registered target (`--cpu-arch`, ...): each option
// comes from its backend (TargetBackend::options), so a new target brings
// its options without a change to any driver.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_TARGETCOMMANDLINE_H
#define TANDEM_LOWERING_TARGETCOMMANDLINE_H

#include "tandem/Lowering/TargetBackend.h"

#include "llvm/Support/CommandLine.h"

#include <memory>
#include <string>
#include <vector>

namespace tandem::lowering {

class TargetCommandLine {
public:
  /// Creates `--<option>` for every option of every registered target, in
  /// `category` and `subcommand`. The targets must be registered first, and
  /// the command line parsed after.
  TargetCommandLine(
      llvm::cl::OptionCategory &category,
      llvm::cl::SubCommand &subcommand = llvm::cl::SubCommand::getTopLevel());
  ~TargetCommandLine();
  TargetCommandLine(const TargetCommandLine &) = delete;
  TargetCommandLine &operator=(const TargetCommandLine &) = delete;

  /// The target options given on the command line, by name.
  TargetOptionValues given() const;

  /// The backend `target` names, configured with the given options; null
  /// for `none`. Errors name the option at fault: an unknown target ("--target
  /// must be none or cpu, found 'gpu'"), a target option without a target,
  /// an option another target takes, a bad value.
  llvm::Expected<std::unique_ptr<TargetBackend>>
  create(llvm::StringRef target) const;

private:
  /// cl::opt keeps its name and description as StringRefs: they live here.
  struct Entry {
    std::string name;
    std::string description;
    /// One of the two, by TargetOption::flag.
    std::unique_ptr<llvm::cl::opt<std::string>> option;
    std::unique_ptr<llvm::cl::opt<bool>> flag;
  };
  std::vector<std::unique_ptr<Entry>> entries;
};

/// "none or cpu, cuda": the values `--target` takes, for messages and help.
std::string targetChoices();

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_TARGETCOMMANDLINE_H
