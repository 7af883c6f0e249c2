//===- Manifest.h - per-rank manifests (tandem-rank-v2) ---------*- C++ -*-===//
//
// The one definition of the compiler-runtime contract (docs/manifest.md):
// the manifest written next to each rank's library says what the runtime
// needs to execute the rank's action list without MLIR. The compiler fills
// a Manifest and writes it with writeManifest; the runtime reads it with
// parseManifest, the same code, so the two cannot drift apart. Every field
// is checked when the file is read: a wrong format, a missing or mistyped
// field, a size no machine can allocate, or a reference to an unknown
// fragment, parameter or input is an error naming the file and the field.
// No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MANIFEST_H
#define TANDEM_RUNTIME_MANIFEST_H

#include "tandem/Runtime/Init.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tandem::runtime {

/// The version string every manifest carries in its "format" field.
inline constexpr const char *kManifestFormat = "tandem-rank-v2";

/// The largest byte size a manifest may give one tensor or the arena: 2^48
/// bytes (256 TiB), beyond the memory of any machine a rank runs on, and
/// small enough that sums of a few such sizes cannot overflow 64 bits.
inline constexpr uint64_t kMaxBytes = uint64_t(1) << 48;

/// Element types of manifest tensors. The f8 types are MLIR's f8E4M3FN
/// (no infinities, saturating codecs) and f8E5M2.
enum class ElementType { F32, F64, I32, I64, BF16, F16, I8, F8E4M3FN, F8E5M2 };

/// "f32", "f64", "i32", "i64", "bf16", "f16", "i8", "f8E4M3FN", "f8E5M2":
/// MLIR's spelling of the element type.
const char *elementTypeName(ElementType type);
size_t elementTypeSize(ElementType type);
/// The element type spelt `name`, or nullopt.
std::optional<ElementType> parseElementType(const std::string &name);

/// Where a buffer lives: host memory, or the memory of the rank's device.
enum class MemorySpace { Host, Device };
const char *memorySpaceName(MemorySpace space);

enum class TargetKind { Cpu, Cuda };
const char *targetKindName(TargetKind kind);

/// What the rank's library was compiled for.
struct TargetInfo {
  TargetKind kind = TargetKind::Cpu;
  /// -march value (cpu) or SM architecture (cuda, e.g. "sm_90").
  std::string arch;
  /// Instruction-set extensions the library may use (cpu; names as
  /// missingCpuFeatures knows them), checked against the CPU before the
  /// library is loaded.
  std::vector<std::string> features;
  /// Every buffer the target's code is given is aligned to this (a power of
  /// two, at least 64); the memory plan's alignment is at least this.
  uint64_t alignment = 64;

  auto tie() const { return std::tie(kind, arch, features, alignment); }
};

struct GridInfo {
  int64_t stages = 0, chunks = 0, replicas = 0, microbatches = 0;
  int64_t rank = 0, stage = 0, replica = 0;

  auto tie() const {
    return std::tie(stages, chunks, replicas, microbatches, rank, stage,
                    replica);
  }
};

struct ParameterInfo {
  std::string name;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  /// The shape the initializer draws when the parameter is stored padded
  /// (init's padding says where); empty when it is not.
  std::vector<int64_t> logicalShape;
  rng::InitSpec init;
  bool updated = false;
  MemorySpace space = MemorySpace::Host;

  auto tie() const {
    return std::tie(name, dtype, shape, bytes, logicalShape, init, updated,
                    space);
  }
};

/// What a step input feeds, as the lowering saw in the fragments that bind
/// it: the ids of an embedding (tokens), the targets of a cross-entropy
/// (targets), neither (other), or both (ambiguous).
enum class InputRole { Tokens, Targets, Other, Ambiguous };

struct InputInfo {
  int64_t index = 0;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> microbatchShape, stepShape;
  uint64_t microbatchBytes = 0;
  InputRole role = InputRole::Other;
  /// The smallest table or class count it indexes, when it indexes one.
  std::optional<int64_t> vocabulary;
  MemorySpace space = MemorySpace::Host;

  auto tie() const {
    return std::tie(index, dtype, microbatchShape, stepShape, microbatchBytes,
                    role, vocabulary, space);
  }
};

struct OutputInfo {
  int64_t index = 0;
  std::string fragment;
  int64_t result = 0;

  auto tie() const { return std::tie(index, fragment, result); }
};

/// An index the rank's code checks (an embedding's id, a loss's target):
/// what the runtime says when a fragment reports it outside [0, bound)
/// (FragmentABI.h, the status word names the entry).
struct IndexCheckInfo {
  std::string op;       ///< "nn.embedding"
  std::string location; ///< "model.mlir:12:5", or empty
  std::string index;    ///< "id", "target"
  std::string range;    ///< "vocabulary", "classes"
  int64_t bound = 0;

  auto tie() const { return std::tie(op, location, index, range, bound); }
};

/// A slot: result `result` of `fragment`, of microbatch `microbatch` (-1 for
/// once-per-step producers).
struct SlotRef {
  std::string fragment;
  int64_t result = 0;
  int64_t microbatch = -1;

  auto tie() const { return std::tie(fragment, result, microbatch); }
};

/// "fragment[result]", with " microbatch k" for a per-microbatch slot.
std::string slotText(const SlotRef &slot);

enum class BindingKind { Param, Input, Slot };
enum class SlotRule { SameMicrobatch, StepValue, SumMicrobatches };
/// Who sums a sum_microbatches argument over the microbatches: the runtime
/// (an accumulator buffer of the plan, slots added in microbatch order), or
/// the producing fragment itself (accumulating into its result, as a GEMM
/// with beta = 1 does).
enum class Accumulation { Runtime, Fragment };

struct ArgumentInfo {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  BindingKind kind = BindingKind::Param;
  std::string param; // Param
  int64_t input = 0; // Input
  SlotRef slot;      // Slot (microbatch unused)
  SlotRule rule = SlotRule::SameMicrobatch;
  bool local = false;
  Accumulation accumulatedBy = Accumulation::Runtime; // SumMicrobatches

  auto tie() const {
    return std::tie(dtype, shape, bytes, kind, param, input, slot, rule, local,
                    accumulatedBy);
  }
};

struct ResultInfo {
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  std::optional<std::string> update;
  std::optional<int64_t> output;
  /// The argument (bound to the parameter `update` names) whose buffer the
  /// result is written over: the update happens in place and the result
  /// has no slot buffer.
  std::optional<int64_t> inPlaceOf;

  auto tie() const {
    return std::tie(dtype, shape, bytes, update, output, inPlaceOf);
  }
};

struct FragmentInfo {
  std::string name, symbol, scratchSymbol, kind;
  bool perMicrobatch = false;
  int64_t stage = 0, chunk = 0;
  uint64_t scratchBytes = 0;
  std::vector<ArgumentInfo> arguments;
  std::vector<ResultInfo> results;

  auto tie() const {
    return std::tie(name, symbol, scratchSymbol, kind, perMicrobatch, stage,
                    chunk, scratchBytes, arguments, results);
  }
};

enum class ActionKind { Run, Send, Recv, AllReduce, Broadcast };

struct ActionInfo {
  ActionKind op = ActionKind::Run;
  // Run.
  std::string fragment;
  int64_t microbatch = -1;
  // Send / Recv / AllReduce / Broadcast: the slot and its tensor.
  SlotRef slot;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  // Send / Recv: the peer, the channel, the message's number among this
  // rank's messages in that direction with that peer on that channel, and
  // the type on the wire.
  int64_t peer = 0, channel = 0, sequence = 0;
  ElementType wire = ElementType::F32;
  // AllReduce / Broadcast: the member ranks in order, the collective's
  // number among this rank's collectives over the same member set, the
  // reduction (sum, max, ...) or the root rank.
  std::vector<int64_t> group;
  std::string reduction;
  int64_t root = 0;

  auto tie() const {
    return std::tie(op, fragment, microbatch, slot, dtype, shape, bytes, peer,
                    channel, sequence, wire, group, reduction, root);
  }
};

enum class PlanBufferKind { Slot, Accumulator, Scratch };

/// One buffer of the memory plan. Slot: `slot` (microbatch -1 once per
/// step). Accumulator: the sum for argument `argument` of the run at
/// actions[`action`]. Scratch: the scratch of the run at actions[`action`].
/// Live over actions [first, last]; last == actions.size() is the end of
/// the step.
struct PlanBufferInfo {
  PlanBufferKind kind = PlanBufferKind::Slot;
  SlotRef slot;
  int64_t action = -1, argument = -1;
  uint64_t offset = 0, bytes = 0;
  int64_t first = 0, last = 0;
  /// The actions that touch the buffer by the reader's own walk of the
  /// action list, not the plan's interval (which must contain them): where
  /// the separate-buffers mode allocates and frees it. Not written; set by
  /// checkMemoryPlan.
  int64_t usedFirst = 0, usedLast = 0;

  /// The written fields.
  auto tie() const {
    return std::tie(kind, slot, action, argument, offset, bytes, first, last);
  }
};

/// The "memory" object: one arena per rank (docs/memory-plan.md), in one
/// memory space. Checked when read (checkMemoryPlan): every buffer aligned
/// and inside the arena, buffers live together never share a byte, and
/// every buffer the action list defines or reads is planned and live
/// whenever it is touched.
struct MemoryPlanInfo {
  MemorySpace space = MemorySpace::Host;
  uint64_t alignment = 64, arenaBytes = 0, naiveBytes = 0;
  std::vector<PlanBufferInfo> buffers;

  auto tie() const {
    return std::tie(space, alignment, arenaBytes, naiveBytes, buffers);
  }
};

/// The optional "predicted_memory" object: mpmd-memory's analysis of the
/// rank (docs/mpmd.md, "Memory analysis"), bytes by category. The
/// categories are each one's own peak and need not sum to `peakBytes`.
struct PredictedMemoryInfo {
  std::string analysis;
  uint64_t peakBytes = 0, parameters = 0, parameterCopies = 0,
           optimizerState = 0, gradients = 0, stash = 0, stashPerMicrobatch = 0,
           peakInFlight = 0, temporaries = 0;

  auto tie() const {
    return std::tie(analysis, peakBytes, parameters, parameterCopies,
                    optimizerState, gradients, stash, stashPerMicrobatch,
                    peakInFlight, temporaries);
  }
};

struct Manifest {
  /// The manifest's own path and the directory it lives in (not written;
  /// set by readManifest and parseManifest).
  std::string path, directory;
  std::string program, library, source;
  TargetInfo target;
  GridInfo grid;
  std::vector<ParameterInfo> parameters;
  std::vector<InputInfo> inputs;
  std::vector<OutputInfo> outputs;
  std::vector<FragmentInfo> fragments;
  std::vector<ActionInfo> actions;
  MemoryPlanInfo memory;
  /// Absent when the compiler had no analysis for the rank.
  std::optional<PredictedMemoryInfo> predictedMemory;
  /// The library's index checks, in the numbering its code reports
  /// (absent from the text when there are none).
  std::vector<IndexCheckInfo> indexChecks;

  /// The written fields.
  auto tie() const {
    return std::tie(program, library, source, target, grid, parameters, inputs,
                    outputs, fragments, actions, memory, predictedMemory,
                    indexChecks);
  }

  /// Index into `fragments`, or -1.
  int64_t findFragment(const std::string &name) const;
  /// Index into `parameters`, or -1.
  int64_t findParameter(const std::string &name) const;
  /// Index into `inputs` of step input `index`, or -1.
  int64_t findInput(int64_t index) const;
};

/// Field-by-field equality of the written fields, for every struct above.
#define TANDEM_MANIFEST_EQUALITY(T)                                            \
  inline bool operator==(const T &a, const T &b) {                             \
    return a.tie() == b.tie();                                                 \
  }                                                                            \
  inline bool operator!=(const T &a, const T &b) { return !(a == b); }
TANDEM_MANIFEST_EQUALITY(TargetInfo)
TANDEM_MANIFEST_EQUALITY(GridInfo)
TANDEM_MANIFEST_EQUALITY(ParameterInfo)
TANDEM_MANIFEST_EQUALITY(InputInfo)
TANDEM_MANIFEST_EQUALITY(OutputInfo)
TANDEM_MANIFEST_EQUALITY(IndexCheckInfo)
TANDEM_MANIFEST_EQUALITY(SlotRef)
TANDEM_MANIFEST_EQUALITY(ArgumentInfo)
TANDEM_MANIFEST_EQUALITY(ResultInfo)
TANDEM_MANIFEST_EQUALITY(FragmentInfo)
TANDEM_MANIFEST_EQUALITY(ActionInfo)
TANDEM_MANIFEST_EQUALITY(PlanBufferInfo)
TANDEM_MANIFEST_EQUALITY(MemoryPlanInfo)
TANDEM_MANIFEST_EQUALITY(PredictedMemoryInfo)
TANDEM_MANIFEST_EQUALITY(Manifest)
#undef TANDEM_MANIFEST_EQUALITY

/// The manifest's text (format kManifestFormat): nested objects indented,
/// each parameter, input, output, argument, result, action and buffer on
/// one line, so that FileCheck tests and people can read it line by line.
std::string writeManifest(const Manifest &manifest);

/// Parses manifest text; `what` (usually the path) starts every error.
std::optional<Manifest> parseManifest(const std::string &text,
                                      const std::string &what,
                                      std::string &error);
/// Reads and parses `path`.
std::optional<Manifest> readManifest(const std::string &path,
                                     std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MANIFEST_H
