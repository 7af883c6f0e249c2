//===- RankFiles.cpp - tandemc writes the per-rank modules ----------------===//

#include "RankFiles.h"

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

LogicalResult tandem::tandemc::writeRankModules(ModuleOp top,
                                                llvm::StringRef dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return top.emitError() << "tandemc: cannot create '" << dir
                           << "': " << ec.message();
  for (ModuleOp module : top.getOps<ModuleOp>()) {
    std::optional<int64_t> rank;
    for (auto program : module.getOps<mpmd::ProgramOp>())
      if (auto attr = program->getAttrOfType<IntegerAttr>("mpmd.split_rank"))
        rank = attr.getInt();
    if (!rank)
      continue; // Not a rank module of mpmd-split-programs.
    llvm::SmallString<128> path(dir);
    llvm::sys::path::append(path, "rank" + std::to_string(*rank) + ".mlir");
    std::error_code ec;
    llvm::raw_fd_ostream os(path, ec);
    if (!ec) {
      module.print(os);
      os << "\n";
      os.close();
      ec = os.error();
    }
    if (ec)
      return module.emitError()
             << "tandemc: cannot write '" << path << "': " << ec.message();
  }
  return success();
}
