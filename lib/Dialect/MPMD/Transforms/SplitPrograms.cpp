//===- SplitPrograms.cpp - mpmd-split-programs ----------------------------===//
//
// Splits every scheduled, lowered mpmd.program into one program per rank,
// each in its own `builtin.module @rank<N>` nested in the top module, with
// the nn.parameter declarations its fragments bind. See docs/mpmd.md,
// "mpmd-split-programs".
//
//===----------------------------------------------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/MPMD/Transforms/Passes.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace tandem::mpmd {
#define GEN_PASS_DEF_MPMDSPLITPROGRAMS
#include "tandem/Dialect/MPMD/Transforms/Passes.h.inc"
} // namespace tandem::mpmd

using namespace mlir;
using namespace tandem::mpmd;

namespace {

constexpr llvm::StringLiteral kSplitRankAttrName = "mpmd.split_rank";

/// The fragment symbol an action names.
FlatSymbolRefAttr getActionFragment(Operation &action) {
  return llvm::TypeSwitch<Operation *, FlatSymbolRefAttr>(&action)
      .Case<RunOp, SendOp, RecvOp, AllReduceOp, BroadcastOp>(
          [](auto op) { return op.getFragmentAttr(); })
      .Default([](Operation *) { return FlatSymbolRefAttr(); });
}

/// Checks that `program` is in the form the pass splits: every rank has
/// its list and cross-stage transfers were lowered to send/recv.
LogicalResult checkSplittable(ProgramOp program) {
  auto ranks = program.getBodyBlock().getOps<RankOp>();
  if (ranks.empty())
    return program.emitOpError()
           << "has no mpmd.rank action lists (expected a scheduled program: "
              "run mpmd-schedule and mpmd-lower-transfers before "
              "mpmd-split-programs)";
  bool hasP2P = false;
  for (RankOp rank : ranks)
    for (Operation &action : rank.getBodyBlock())
      hasP2P |= isa<SendOp, RecvOp>(action);
  if (hasP2P)
    return success();
  SymbolTable table(program);
  for (TransferOp transfer : program.getBodyBlock().getOps<TransferOp>()) {
    auto src = table.lookup<FragmentOp>(transfer.getSrc());
    auto dst = table.lookup<FragmentOp>(transfer.getDst());
    if (src && dst && src.getStage() != dst.getStage())
      return transfer.emitOpError()
             << "crosses from stage " << src.getStage() << " to stage "
             << dst.getStage() << ", but no rank of program @"
             << program.getSymName()
             << " has an mpmd.send or mpmd.recv (expected explicit "
                "communication: run mpmd-lower-transfers before "
                "mpmd-split-programs)";
  }
  return success();
}

/// Builds a declaration of remote fragment `src`: no arguments and no
/// body, the same result types, placement and kind, marked `mpmd.remote`.
void buildRemoteDeclaration(OpBuilder &builder, FragmentOp src) {
  auto type = builder.getFunctionType({}, src.getResultTypes());
  auto decl = FragmentOp::create(builder, src.getLoc(), src.getSymName(), type,
                                 src.getStage(), src.getChunk(), src.getKind());
  decl.getBody().getBlocks().clear();
  // No result attributes: a remote fragment's parameter updates and step
  // outputs belong to its own rank (whose module holds the parameter).
  decl->setAttr(MPMDDialect::kRemoteAttrName, builder.getUnitAttr());
}

struct MPMDSplitProgramsPass
    : tandem::mpmd::impl::MPMDSplitProgramsBase<MPMDSplitProgramsPass> {
  using MPMDSplitProgramsBase::MPMDSplitProgramsBase;

  void getDependentDialects(DialectRegistry &registry) const override {
    MPMDSplitProgramsBase::getDependentDialects(registry);
    registry.insert<tandem::nn::NNDialect>();
  }

  void runOnOperation() override;

  /// Fills `module` (which may already hold other programs' ranks) with
  /// rank `rank`'s part of `program`.
  void splitRank(ProgramOp program, int64_t rank, RankOp list, ModuleOp module);
};

void MPMDSplitProgramsPass::splitRank(ProgramOp program, int64_t rank,
                                      RankOp list, ModuleOp module) {
  ModuleOp top = getOperation();
  SymbolTable programTable(program);

  // Fragments this rank runs, and fragments it only names (remote
  // producers of received or broadcast slots, sources of incoming
  // transfers).
  llvm::SetVector<StringAttr> local, named;
  if (list)
    for (Operation &action : list.getBodyBlock()) {
      FlatSymbolRefAttr fragment = getActionFragment(action);
      (isa<RunOp>(action) ? local : named).insert(fragment.getAttr());
    }
  SmallVector<TransferOp> transfers;
  for (TransferOp transfer : program.getBodyBlock().getOps<TransferOp>()) {
    if (!local.contains(transfer.getDstAttr().getAttr()))
      continue;
    transfers.push_back(transfer);
    named.insert(transfer.getSrcAttr().getAttr());
  }

  // Parameters the local fragments bind, in the top module's order.
  llvm::DenseSet<StringAttr> params;
  for (StringAttr name : local) {
    auto fragment = programTable.lookup<FragmentOp>(name);
    for (unsigned i = 0, e = fragment.getNumArguments(); i < e; ++i)
      if (FlatSymbolRefAttr param = fragment.getParamBinding(i))
        params.insert(param.getAttr());
  }
  OpBuilder builder(module.getBodyRegion());
  builder.setInsertionPointToEnd(module.getBody());
  SymbolTable moduleTable(module);
  for (auto param : top.getBody()->getOps<tandem::nn::ParameterOp>())
    if (params.contains(param.getSymNameAttr()) &&
        !moduleTable.lookup(param.getSymName())) {
      Operation *copy = builder.clone(*param);
      moduleTable.insert(copy);
    }

  auto split = ProgramOp::create(
      builder, program.getLoc(), program.getSymName(), program.getStages(),
      program.getChunks(), program.getReplicas(), program.getMicrobatches());
  for (NamedAttribute attr : program->getDiscardableAttrs())
    split->setAttr(attr.getName(), attr.getValue());
  split->setAttr(kSplitRankAttrName, builder.getI64IntegerAttr(rank));

  // Program order: fragments (local ones whole, named-only ones as
  // declarations), then the kept transfers, then the rank list.
  builder.setInsertionPointToEnd(&split.getBodyBlock());
  for (FragmentOp fragment : program.getBodyBlock().getOps<FragmentOp>()) {
    StringAttr name = fragment.getSymNameAttr();
    if (local.contains(name))
      builder.clone(*fragment);
    else if (named.contains(name))
      buildRemoteDeclaration(builder, fragment);
  }
  for (TransferOp transfer : transfers)
    builder.clone(*transfer);
  if (list)
    builder.clone(*list);
  else
    RankOp::create(builder, program.getLoc(), rank);
}

void MPMDSplitProgramsPass::runOnOperation() {
  ModuleOp top = getOperation();
  SmallVector<ProgramOp> programs(top.getBody()->getOps<ProgramOp>());
  if (programs.empty())
    return;
  bool failed = false;
  for (ProgramOp program : programs)
    failed |= mlir::failed(checkSplittable(program));
  if (failed)
    return signalPassFailure();

  // One module per rank of any program, created in rank order after the
  // last program.
  SymbolTable topTable(top);
  std::map<int64_t, ModuleOp> modules;
  OpBuilder builder(top.getContext());
  builder.setInsertionPointAfter(programs.back());
  for (ProgramOp program : programs) {
    llvm::DenseMap<int64_t, RankOp> lists;
    for (RankOp list : program.getBodyBlock().getOps<RankOp>())
      lists[list.getRank()] = list;
    for (int64_t rank = 0, e = program.getNumRanks(); rank < e; ++rank) {
      ModuleOp &module = modules[rank];
      if (!module) {
        std::string name = "rank" + std::to_string(rank);
        if (Operation *clash = topTable.lookup(name)) {
          InFlightDiagnostic diag =
              program.emitOpError()
              << "cannot split: the module already has a symbol @" << name
              << " (expected the name free for rank " << rank << "'s module)";
          diag.attachNote(clash->getLoc()) << "@" << name << " is defined here";
          return signalPassFailure();
        }
        module = ModuleOp::create(builder, top.getLoc(), name);
        builder.setInsertionPointAfter(module);
      }
      splitRank(program, rank, lists.lookup(rank), module);
    }
  }
  for (ProgramOp program : programs)
    program.erase();
}

} // namespace
