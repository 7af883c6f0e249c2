//===- Manifest.h - per-rank manifests (tandem-rank-v1) ---------*- C++ -*-===//
//
// Reads the manifest `tandem-lower-cpu` writes next to each rank's library
// (docs/cpu-backend.md, "Manifest, format tandem-rank-v1"). Every field the
// runtime uses is checked when the file is read: a wrong format, a missing or
// mistyped field, or a reference to an unknown fragment, parameter or input is
// an error naming the file and the field. No MLIR dependency.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_RUNTIME_MANIFEST_H
#define TANDEM_RUNTIME_MANIFEST_H

#include "tandem/Runtime/Init.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tandem::runtime {

/// Element types of manifest tensors.
enum class ElementType { F32, F64, I32, I64, BF16, F16 };

/// "f32", "f64", "i32", "i64", "bf16", "f16".
const char *elementTypeName(ElementType type);
size_t elementTypeSize(ElementType type);

struct GridInfo {
  int64_t stages = 0, chunks = 0, replicas = 0, microbatches = 0;
  int64_t rank = 0, stage = 0, replica = 0;
};

struct ParameterInfo {
  std::string name;
  ElementType dtype = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
  rng::InitSpec init;
  bool updated = false;
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
};

struct OutputInfo {
  int64_t index = 0;
  std::string fragment;
  int64_t result = 0;
};

/// A slot: result `result` of `fragment`, of microbatch `microbatch` (-1 for
/// once-per-step producers).
struct SlotRef {
  std::string fragment;
  int64_t result = 0;
  int64_t microbatch = -1;
};

/// "fragment[result]", with " microbatch k" for a per-microbatch slot.
std::string slotText(const SlotRef &slot);

enum class BindingKind { Param, Input, Slot };
enum class SlotRule { SameMicrobatch, StepValue, SumMicrobatches };

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
};

struct FragmentInfo {
  std::string name, symbol, scratchSymbol, kind;
  bool perMicrobatch = false;
  int64_t stage = 0, chunk = 0;
  uint64_t scratchBytes = 0;
  std::vector<ArgumentInfo> arguments;
  std::vector<ResultInfo> results;
};

enum class ActionKind { Run, Send, Recv };

struct ActionInfo {
  ActionKind op = ActionKind::Run;
  // Run.
  std::string fragment;
  int64_t microbatch = -1;
  // Send / Recv.
  SlotRef slot;
  int64_t peer = 0, channel = 0, sequence = 0;
  ElementType dtype = ElementType::F32, wire = ElementType::F32;
  std::vector<int64_t> shape;
  uint64_t bytes = 0;
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
  /// the separate-buffers mode allocates and frees it.
  int64_t usedFirst = 0, usedLast = 0;
};

/// The "memory" object: one arena per rank (docs/cpu-backend.md, "Memory
/// plan"). Checked when read: every buffer aligned and inside the arena,
/// buffers live together never share a byte, and every buffer the action
/// list defines or reads is planned and live whenever it is touched.
struct MemoryPlanInfo {
  uint64_t alignment = 64, arenaBytes = 0, naiveBytes = 0;
  std::vector<PlanBufferInfo> buffers;
};

/// The optional "predicted_memory" object: mpmd-memory's analysis of the
/// rank (docs/mpmd.md, "Memory analysis"), bytes by category. The
/// categories are each one's own peak and need not sum to `peakBytes`.
struct PredictedMemoryInfo {
  std::string analysis;
  uint64_t peakBytes = 0, parameters = 0, parameterCopies = 0,
           optimizerState = 0, gradients = 0, stash = 0, stashPerMicrobatch = 0,
           peakInFlight = 0, temporaries = 0;
};

struct Manifest {
  /// The manifest's own path and the directory it lives in.
  std::string path, directory;
  std::string program, library, source;
  GridInfo grid;
  std::vector<ParameterInfo> parameters;
  std::vector<InputInfo> inputs;
  std::vector<OutputInfo> outputs;
  std::vector<FragmentInfo> fragments;
  std::vector<ActionInfo> actions;
  MemoryPlanInfo memory;
  /// Absent in manifests written before tandemc recorded it.
  std::optional<PredictedMemoryInfo> predictedMemory;

  /// Index into `fragments`, or -1.
  int64_t findFragment(const std::string &name) const;
  /// Index into `parameters`, or -1.
  int64_t findParameter(const std::string &name) const;
  /// Index into `inputs` of step input `index`, or -1.
  int64_t findInput(int64_t index) const;
};

/// Parses manifest text; `what` (usually the path) starts every error.
std::optional<Manifest> parseManifest(const std::string &text,
                                      const std::string &what,
                                      std::string &error);
/// Reads and parses `path`.
std::optional<Manifest> readManifest(const std::string &path,
                                     std::string &error);

} // namespace tandem::runtime

#endif // TANDEM_RUNTIME_MANIFEST_H
