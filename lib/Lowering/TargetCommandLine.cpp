//===- TargetCommandLine.cpp - target options on a command line -----------===//

#include "tandem/Lowering/TargetCommandLine.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace tandem::lowering;

TargetCommandLine::TargetCommandLine(llvm::cl::OptionCategory &category,
                                     llvm::cl::SubCommand &subcommand) {
  llvm::StringSet<> seen;
  for (const std::string &target : registeredTargetBackends()) {
    std::unique_ptr<TargetBackend> backend = createTargetBackend(target);
    for (const TargetOption &option : backend->options()) {
      // Two targets may share an option name; the first description wins.
      if (!seen.insert(option.name).second)
        continue;
      auto entry = std::make_unique<Entry>();
      entry->name = option.name;
      entry->description = "--target " + target + ": " + option.description;
      if (option.flag)
        entry->flag = std::make_unique<llvm::cl::opt<bool>>(
            llvm::StringRef(entry->name), llvm::cl::desc(entry->description),
            llvm::cl::cat(category), llvm::cl::sub(subcommand));
      else
        entry->option = std::make_unique<llvm::cl::opt<std::string>>(
            llvm::StringRef(entry->name), llvm::cl::desc(entry->description),
            llvm::cl::cat(category), llvm::cl::sub(subcommand));
      entries.push_back(std::move(entry));
    }
  }
}

TargetCommandLine::~TargetCommandLine() {
  for (auto &entry : entries) {
    if (entry->option)
      entry->option->removeArgument();
    if (entry->flag)
      entry->flag->removeArgument();
  }
}

TargetOptionValues TargetCommandLine::given() const {
  TargetOptionValues values;
  for (const auto &entry : entries) {
    if (entry->option && entry->option->getNumOccurrences())
      values[entry->name] = entry->option->getValue();
    if (entry->flag && entry->flag->getNumOccurrences())
      values[entry->name] = *entry->flag ? "true" : "false";
  }
  return values;
}

std::string tandem::lowering::targetChoices() {
  return "none or " + llvm::join(registeredTargetBackends(), ", ");
}

llvm::Expected<std::unique_ptr<TargetBackend>>
TargetCommandLine::create(llvm::StringRef target) const {
  TargetOptionValues values = given();
  if (target == "none") {
    if (!values.empty())
      return llvm::createStringError("--" + values.begin()->first +
                                     " is a target option: give --target");
    return nullptr;
  }
  std::unique_ptr<TargetBackend> backend = createTargetBackend(target);
  if (!backend)
    return llvm::createStringError("--target must be " + targetChoices() +
                                   ", found '" + target.str() + "'");
  if (llvm::Error error = backend->configure(values))
    return std::move(error);
  return std::move(backend);
}
