//===- tandem-opt.cpp - Tandem's MLIR optimizer driver --------------------===//
//
// mlir-opt with Tandem's dialects and passes and a curated set of upstream
// ones. --load-pass-plugin and --load-dialect-plugin load out-of-tree passes
// and dialects built against libTandem.so.
//
//===----------------------------------------------------------------------===//

#include "tandem/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/Plugins/DialectPlugin.h"
#include "mlir/Tools/Plugins/PassPlugin.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/WithColor.h"

#include <string>
#include <vector>

namespace {

/// The plugin paths named on the command line, as (flag, path).
std::vector<std::pair<std::string, std::string>> pluginArgs(int argc,
                                                            char **argv) {
  std::vector<std::pair<std::string, std::string>> plugins;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    for (llvm::StringRef flag : {"load-pass-plugin", "load-dialect-plugin"}) {
      llvm::StringRef rest = arg.ltrim('-');
      if (arg.size() - rest.size() == 0 || arg.size() - rest.size() > 2 ||
          !rest.consume_front(flag))
        continue;
      if (rest.consume_front("="))
        plugins.emplace_back(flag.str(), rest.str());
      else if (rest.empty() && i + 1 < argc)
        plugins.emplace_back(flag.str(), argv[i + 1]);
    }
  }
  return plugins;
}

/// MLIR's driver reports a plugin that fails to load and then carries on
/// without it ("Request ignored."), exiting 0. A user who asked for a plugin
/// wants a failure instead, so try each one first.
bool checkPlugins(int argc, char **argv) {
  bool ok = true;
  for (const auto &[flag, path] : pluginArgs(argc, argv)) {
    llvm::Error error = llvm::Error::success();
    if (flag == "load-pass-plugin") {
      auto plugin = mlir::PassPlugin::load(path);
      if (!plugin)
        error = plugin.takeError();
    } else {
      auto plugin = mlir::DialectPlugin::load(path);
      if (!plugin)
        error = plugin.takeError();
    }
    if (error) {
      llvm::WithColor::error(llvm::errs(), "tandem-opt")
          << "--" << flag << "=" << path << ": "
          << llvm::toString(std::move(error)) << "\n";
      ok = false;
    }
  }
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  if (!checkPlugins(argc, argv))
    return 1;
  tandem::registerAllPasses();
  // For passes that take a target's policy (tandem-form-kernels=target=).
  tandem::registerAllTargets();
  mlir::DialectRegistry registry;
  tandem::registerAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tandem optimizer driver\n", registry));
}
