//===- TargetBackend.h - what a target gives the rank lowering --*- C++ -*-===//
//
// The seam between the target-neutral rank lowering (RankLowering.h: rank
// analysis, memory plan, manifest, the driver) and a target: each target
// implements TargetBackend (as IREE's TargetBackend and Triton's
// TargetInfoBase do) and registers a factory under its name; `--target`
// looks the name up. Nothing target-neutral names a target.
// docs/targets.md describes the interface.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_LOWERING_TARGETBACKEND_H
#define TANDEM_LOWERING_TARGETBACKEND_H

#include "tandem/Lowering/Kernels.h"
#include "tandem/Runtime/Manifest.h"

#include "mlir/IR/Operation.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace tandem::lowering {

/// One function of an emitted source: what the manifest needs of it.
struct EmittedFragment {
  /// The IR symbol (`s0.fwd`).
  std::string name;
  /// The entry point's symbol in the library; its scratch size is
  /// `<symbol>_scratch_bytes` (the fragment ABI, docs/targets.md).
  std::string symbol;
  uint64_t scratchBytes = 0;
  /// (result, argument) pairs the code may write in place: the result
  /// updates the parameter the argument binds and the code reads the
  /// argument only where it writes the result. The lowering decides which
  /// to use from the rank's action list.
  std::vector<std::pair<unsigned, unsigned>> inPlaceResults;
};

/// The source a backend emitted for one rank's fragments.
struct EmittedSource {
  std::string text;
  std::vector<EmittedFragment> fragments;
  /// The index checks its code reports, by number (IndexChecks.h): the
  /// manifest's `index_checks`.
  std::vector<runtime::IndexCheckInfo> indexChecks;
};

/// A compiled library: where it is, and whether a cache already had it.
struct CompiledLibrary {
  std::string path;
  bool cached = false;
  /// What the target's compiler said of the code, in one line, or empty
  /// (cuda: its kernels' registers and spills, from ptxas).
  std::string report;
};

/// A target option: `--<name>` on tandemc (e.g. `--cpu-arch`).
struct TargetOption {
  std::string name;
  std::string description;
  /// A flag takes no value (`--cuda-emulate`); given, its value is "true".
  bool flag = false;
};

/// Option values by name, as the driver parsed them.
using TargetOptionValues = std::map<std::string, std::string>;

class TargetBackend {
public:
  virtual ~TargetBackend();

  /// The name `--target` selects (`cpu`).
  virtual llvm::StringRef name() const = 0;
  /// The language of the emitted source, for messages and timing ("C++").
  virtual llvm::StringRef sourceLanguage() const = 0;
  /// The options this target takes.
  virtual std::vector<TargetOption> options() const { return {}; }
  /// Takes option values; an option this target does not take, or a bad
  /// value, is an error naming the option. Called before anything else.
  virtual llvm::Error configure(const TargetOptionValues &values);

  /// The manifest's `target`: kind, architecture, features, and the
  /// alignment every buffer given to the target's code must have.
  virtual runtime::TargetInfo targetInfo() const = 0;
  /// Where the rank's parameters, inputs and arena live.
  virtual runtime::MemorySpace memorySpace() const = 0;
  /// Who sums sum_microbatches arguments over the microbatches.
  virtual runtime::Accumulation accumulation() const = 0;
  /// Which fusions kernel formation makes for this target (Kernels.h).
  virtual FusionPolicy fusionPolicy() const { return {}; }
  /// The nn ops the target writes code for, sorted ("nn.add", ...).
  virtual std::vector<std::string> supportedOps() const = 0;
  /// The multiple its GEMMs want a vocabulary padded to (nn-pad-classes);
  /// 1: none.
  virtual int64_t classMultiple() const { return 1; }
  /// Whether the transports the target's ranks run over may pair messages
  /// without tags, in posting order per rank pair across channels (NCCL):
  /// mpmd-verify then checks that order (fifo-pairs).
  virtual bool pairsMessagesInOrder() const { return false; }
  /// Whether its kernels read an nn.split's pieces in place where they can
  /// (the CUDA attention kernels): the backward then recomputes such a
  /// split from its stashed operand instead of stashing the pieces
  /// (mpmd-remat{recompute-splits}), and neither pass copies them.
  virtual bool readsSplitsInPlace() const { return false; }

  /// File name extensions of a rank's source and library (".cpp", ".so"):
  /// rank N's files are rank<N><extension>.
  virtual llvm::StringRef sourceExtension() const = 0;
  virtual llvm::StringRef libraryExtension() const = 0;

  /// Emits one source holding an entry point for each of `functions`
  /// (mpmd.fragment ops with bodies, in the rank's program order). Reports
  /// what it cannot lower as errors at the op, and fails.
  virtual mlir::FailureOr<EmittedSource>
  emit(llvm::ArrayRef<mlir::Operation *> functions) = 0;
  /// Compiles an emitted source into a library. May be called from several
  /// threads at once.
  virtual llvm::Expected<CompiledLibrary> compile(llvm::StringRef source) = 0;
};

/// The fragment ABI's entry symbol of function `name`: "tandem_" and the
/// name with every character but letters, digits and '_' replaced by '_'
/// (`s0.fwd` -> `tandem_s0_fwd`).
std::string entrySymbol(llvm::StringRef name);

using TargetBackendFactory = std::function<std::unique_ptr<TargetBackend>()>;

/// Registers `factory` under `name`; a second registration of a name
/// replaces the first.
void registerTargetBackend(llvm::StringRef name, TargetBackendFactory factory);
/// A new backend for `name`, or null when none is registered.
std::unique_ptr<TargetBackend> createTargetBackend(llvm::StringRef name);
/// The registered names, sorted.
std::vector<std::string> registeredTargetBackends();

} // namespace tandem::lowering

#endif // TANDEM_LOWERING_TARGETBACKEND_H
