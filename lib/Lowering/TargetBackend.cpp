//===- TargetBackend.cpp - the registry of target backends ----------------===//

#include "tandem/Lowering/TargetBackend.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"

#include <mutex>

using namespace tandem::lowering;

namespace {

struct Registry {
  std::mutex mutex;
  llvm::StringMap<TargetBackendFactory> factories;
};

Registry &registry() {
  static Registry instance;
  return instance;
}

} // namespace

TargetBackend::~TargetBackend() = default;

std::string tandem::lowering::entrySymbol(llvm::StringRef name) {
  std::string symbol = "tandem_";
  for (char c : name)
    symbol += llvm::isAlnum(c) || c == '_' ? c : '_';
  return symbol;
}

llvm::Error TargetBackend::configure(const TargetOptionValues &values) {
  std::vector<TargetOption> known = options();
  for (const auto &[option, value] : values)
    if (llvm::none_of(known,
                      [&](const TargetOption &o) { return o.name == option; }))
      return llvm::createStringError(
          "--" + option + " is not an option of --target " + name().str());
  return llvm::Error::success();
}

void tandem::lowering::registerTargetBackend(llvm::StringRef name,
                                             TargetBackendFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[name] = std::move(factory);
}

std::unique_ptr<TargetBackend>
tandem::lowering::createTargetBackend(llvm::StringRef name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto it = r.factories.find(name);
  return it == r.factories.end() ? nullptr : it->second();
}

std::vector<std::string> tandem::lowering::registeredTargetBackends() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &entry : r.factories)
    names.push_back(entry.first().str());
  llvm::sort(names);
  return names;
}
