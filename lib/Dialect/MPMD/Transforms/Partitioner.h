//===- Partitioner.h - mpmd-partition's implementation ---------*- C++ -*-===//
//
// The state mpmd-partition builds up, shared by its phases:
// PartitionPhases.cpp (op phases, microbatch accumulation),
// PartitionPlacement.cpp (stages), PartitionFragments.cpp (fragments and
// transfers). Partition.cpp has the pass and the overview.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LIB_DIALECT_MPMD_TRANSFORMS_PARTITIONER_H
#define TANDEM_LIB_DIALECT_MPMD_TRANSFORMS_PARTITIONER_H

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace tandem::mpmd::partition {

using namespace mlir;

/// A user pass's stage assignment for a forward op (a virtual stage).
constexpr StringLiteral kStageAnnotation = "mpmd.stage";

/// Prologue: work that depends only on parameters (e.g. a parameter's
/// low-precision cast), done once per step instead of once per microbatch.
enum class Phase { Source, Prologue, Forward, Backward, Step };

/// Step-phase nodes that are not cloned: the sum over microbatches of a
/// per-microbatch value (a fragment argument bound by an accumulating
/// transfer), and the value a fragment yields as a step result.
enum class Special { None, Accumulate, Yield };

struct PartitionOptions {
  int64_t stages, chunks, microbatches;
  bool splitBackward;
};

/// A future fragment.
struct Group {
  int64_t stage = 0, chunk = 0;
  FragmentKind kind = FragmentKind::Fwd;
  std::string name;
  SmallVector<Operation *> ops;
  /// Values defined here (or, for accumulation and yield nodes, standing
  /// for them) that other groups or the step's results read, in order.
  llvm::SetVector<Value> exports;
  /// Parameters this step_prologue hands to other stages.
  llvm::SetVector<StringRef> exportedParams;
  FragmentOp fragment;
};

class Partitioner {
public:
  Partitioner(ModuleOp module, func::FuncOp function, StringRef programName,
              PartitionOptions options)
      : module(module), original(function), programName(programName),
        opts(options), numVirtual(options.stages * options.chunks) {}

  LogicalResult run();

private:
  LogicalResult checkInputs();
  LogicalResult classify();
  LogicalResult insertAccumulation();
  LogicalResult placeForward();
  LogicalResult placeBackward();
  LogicalResult placeStep();
  void replicateSharedScalars(SmallVectorImpl<Operation *> &stepOps);
  void formGroups();
  LogicalResult build();

  bool isPerMicrobatch(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() &&
           (it->second == Phase::Forward || it->second == Phase::Backward);
  }
  bool isStep(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Step;
  }
  bool isPrologue(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Prologue;
  }
  bool isSource(Operation *op) const {
    auto it = phase.find(op);
    return it != phase.end() && it->second == Phase::Source;
  }
  Special specialOf(Operation *op) const {
    auto it = special.find(op);
    return it == special.end() ? Special::None : it->second;
  }
  int64_t physicalStage(int64_t virtualStage) const {
    return virtualStage % opts.stages;
  }
  Operation *newStepNode(Operation *op, Special kind) {
    phase[op] = Phase::Step;
    special[op] = kind;
    return op;
  }
  Value meanOf(Value sum, Operation *before);

  ModuleOp module;
  func::FuncOp original;
  StringRef programName;
  PartitionOptions opts;
  int64_t numVirtual;

  OwningOpRef<func::FuncOp> work;
  Block *body = nullptr;
  func::ReturnOp ret;
  /// nn.updates: the parameter result i + 1 replaces (train steps).
  SmallVector<FlatSymbolRefAttr> updates;

  llvm::DenseMap<Operation *, Phase> phase;
  llvm::DenseMap<Operation *, Special> special;
  llvm::DenseMap<Operation *, int64_t> virtualStage;
  /// Stage of step and prologue ops.
  llvm::DenseMap<Operation *, int64_t> stepStage;
  /// The parameters a prologue op depends on.
  llvm::DenseMap<Operation *, llvm::SmallSetVector<StringRef, 2>> paramsOf;
  llvm::DenseMap<Operation *, int64_t> level;
  llvm::StringMap<int64_t> owner;
  /// The frozen parameters: every stage that reads one binds its own copy.
  /// (The work clone is detached from the module, so its reads cannot look
  /// their declarations up.)
  llvm::StringSet<> frozen;
  bool readsFrozen(nn::ParamOp read) const {
    return frozen.contains(read.getName());
  }
  /// The stage a read on `stage` gets its parameter from: the owner, or
  /// the reading stage itself for a frozen parameter.
  int64_t homeOf(nn::ParamOp read, int64_t stage) const {
    return readsFrozen(read) ? stage : owner.lookup(read.getName());
  }
  llvm::DenseMap<Value, Value> means;
  llvm::DenseSet<Operation *> meanOps;

  std::vector<Group> groups;
  llvm::DenseMap<Operation *, unsigned> groupOf;
  /// Each stage's level-0 prologue, which hands parameters to other stages.
  std::map<int64_t, unsigned> prologueOf;
  /// Prologue groups by (level, stage): the program's first fragments.
  SmallVector<unsigned> prologueOrder;
};

} // namespace tandem::mpmd::partition

#endif // TANDEM_LIB_DIALECT_MPMD_TRANSFORMS_PARTITIONER_H
