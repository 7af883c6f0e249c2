//===- ManifestWriter.cpp - writing per-rank manifests (tandem-rank-v2) ---===//
//
// The text parseManifest reads (Manifest.cpp), field for field; the
// round-trip test (unittests/Runtime/ManifestTest.cpp) holds the two
// together.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/JsonWriter.h"
#include "tandem/Runtime/Manifest.h"

#include "ManifestNames.h"

using namespace tandem::runtime;
using tandem::io::JsonWriter;

namespace {

void writeTensor(JsonWriter &j, ElementType dtype,
                 const std::vector<int64_t> &shape, uint64_t bytes) {
  j.field("dtype", elementTypeName(dtype));
  j.key("shape");
  j.integers(shape);
  j.field("bytes", bytes);
}

void writeSlot(JsonWriter &j, const SlotRef &slot, bool withMicrobatch) {
  j.key("slot");
  j.beginObject();
  j.field("fragment", slot.fragment);
  j.field("result", slot.result);
  if (withMicrobatch && slot.microbatch >= 0)
    j.field("microbatch", slot.microbatch);
  j.endObject();
}

void writeTarget(JsonWriter &j, const TargetInfo &target) {
  j.key("target");
  j.beginObject();
  j.field("kind", targetKindName(target.kind));
  j.field("arch", target.arch);
  j.key("features");
  j.strings(target.features);
  j.field("alignment", target.alignment);
  j.endObject();
}

void writeGrid(JsonWriter &j, const GridInfo &grid) {
  j.key("grid");
  j.beginObject();
  j.field("stages", grid.stages);
  j.field("chunks", grid.chunks);
  j.field("replicas", grid.replicas);
  j.field("microbatches", grid.microbatches);
  j.field("rank", grid.rank);
  j.field("stage", grid.stage);
  j.field("replica", grid.replica);
  j.endObject();
}

void writeParameter(JsonWriter &j, const ParameterInfo &p) {
  j.oneLine().beginObject();
  j.field("name", p.name);
  writeTensor(j, p.dtype, p.shape, p.bytes);
  if (!p.logicalShape.empty()) {
    j.key("logical_shape");
    j.integers(p.logicalShape);
  }
  j.key("init");
  j.beginObject();
  j.field("kind", names::nameOf(names::kInitKinds, p.init.kind));
  j.field("a", p.init.a);
  j.field("b", p.init.b);
  if (p.init.hasSeed)
    j.field("seed", static_cast<int64_t>(p.init.seed));
  j.endObject();
  j.field("updated", p.updated);
  j.field("space", memorySpaceName(p.space));
  j.endObject();
}

void writeInput(JsonWriter &j, const InputInfo &in) {
  j.oneLine().beginObject();
  j.field("index", in.index);
  j.field("dtype", elementTypeName(in.dtype));
  j.key("microbatch_shape");
  j.integers(in.microbatchShape);
  j.key("step_shape");
  j.integers(in.stepShape);
  j.field("microbatch_bytes", in.microbatchBytes);
  j.field("role", names::nameOf(names::kRoles, in.role));
  if (in.vocabulary)
    j.field("vocabulary", *in.vocabulary);
  j.field("space", memorySpaceName(in.space));
  j.endObject();
}

void writeArgument(JsonWriter &j, const ArgumentInfo &arg) {
  j.oneLine().beginObject();
  writeTensor(j, arg.dtype, arg.shape, arg.bytes);
  switch (arg.kind) {
  case BindingKind::Param:
    j.field("param", arg.param);
    break;
  case BindingKind::Input:
    j.field("input", arg.input);
    break;
  case BindingKind::Slot:
    writeSlot(j, arg.slot, /*withMicrobatch=*/false);
    j.field("rule", names::nameOf(names::kRules, arg.rule));
    j.field("local", arg.local);
    if (arg.rule == SlotRule::SumMicrobatches)
      j.field("accumulated_by",
              names::nameOf(names::kAccumulations, arg.accumulatedBy));
    break;
  }
  j.endObject();
}

void writeResult(JsonWriter &j, const ResultInfo &res) {
  j.oneLine().beginObject();
  writeTensor(j, res.dtype, res.shape, res.bytes);
  if (res.update)
    j.field("update", *res.update);
  if (res.inPlaceOf)
    j.field("in_place_of", *res.inPlaceOf);
  if (res.output)
    j.field("output", *res.output);
  j.endObject();
}

void writeFragment(JsonWriter &j, const FragmentInfo &f) {
  j.beginObject();
  j.field("name", f.name);
  j.field("symbol", f.symbol);
  j.field("scratch_symbol", f.scratchSymbol);
  j.field("kind", f.kind);
  j.field("per_microbatch", f.perMicrobatch);
  j.field("stage", f.stage);
  j.field("chunk", f.chunk);
  j.field("scratch_bytes", f.scratchBytes);
  j.key("arguments");
  j.beginArray();
  for (const ArgumentInfo &arg : f.arguments)
    writeArgument(j, arg);
  j.endArray();
  j.key("results");
  j.beginArray();
  for (const ResultInfo &res : f.results)
    writeResult(j, res);
  j.endArray();
  j.endObject();
}

void writeAction(JsonWriter &j, const ActionInfo &a) {
  j.oneLine().beginObject();
  j.field("op", names::nameOf(names::kActions, a.op));
  switch (a.op) {
  case ActionKind::Run:
    j.field("fragment", a.fragment);
    if (a.microbatch >= 0)
      j.field("microbatch", a.microbatch);
    break;
  case ActionKind::Send:
  case ActionKind::Recv:
    writeSlot(j, a.slot, /*withMicrobatch=*/true);
    j.field("peer", a.peer);
    j.field("channel", a.channel);
    j.field("sequence", a.sequence);
    writeTensor(j, a.dtype, a.shape, a.bytes);
    j.field("wire", elementTypeName(a.wire));
    break;
  case ActionKind::AllReduce:
  case ActionKind::Broadcast:
    if (a.op == ActionKind::AllReduce)
      j.field("reduction", a.reduction);
    else
      j.field("root", a.root);
    writeSlot(j, a.slot, /*withMicrobatch=*/true);
    j.key("group");
    j.integers(a.group);
    j.field("sequence", a.sequence);
    writeTensor(j, a.dtype, a.shape, a.bytes);
    break;
  }
  j.endObject();
}

void writeBuffer(JsonWriter &j, const PlanBufferInfo &b) {
  j.oneLine().beginObject();
  j.field("kind", names::nameOf(names::kBufferKinds, b.kind));
  switch (b.kind) {
  case PlanBufferKind::Slot:
    j.field("fragment", b.slot.fragment);
    j.field("result", b.slot.result);
    if (b.slot.microbatch >= 0)
      j.field("microbatch", b.slot.microbatch);
    break;
  case PlanBufferKind::Accumulator:
    j.field("action", b.action);
    j.field("argument", b.argument);
    break;
  case PlanBufferKind::Scratch:
    j.field("action", b.action);
    break;
  }
  j.field("offset", b.offset);
  j.field("bytes", b.bytes);
  j.field("first", b.first);
  j.field("last", b.last);
  j.endObject();
}

void writeMemory(JsonWriter &j, const MemoryPlanInfo &plan) {
  j.key("memory");
  j.beginObject();
  j.field("space", memorySpaceName(plan.space));
  j.field("alignment", plan.alignment);
  j.field("arena_bytes", plan.arenaBytes);
  j.field("naive_bytes", plan.naiveBytes);
  j.key("buffers");
  j.beginArray();
  for (const PlanBufferInfo &b : plan.buffers)
    writeBuffer(j, b);
  j.endArray();
  j.endObject();
}

void writePrediction(JsonWriter &j, const PredictedMemoryInfo &p) {
  j.key("predicted_memory");
  j.beginObject();
  j.field("analysis", p.analysis);
  j.field("peak_bytes", p.peakBytes);
  j.field("parameters", p.parameters);
  j.field("parameter_copies", p.parameterCopies);
  j.field("optimizer_state", p.optimizerState);
  j.field("gradients", p.gradients);
  j.field("stash", p.stash);
  j.field("stash_per_microbatch", p.stashPerMicrobatch);
  j.field("peak_in_flight", p.peakInFlight);
  j.field("temporaries", p.temporaries);
  j.endObject();
}

template <typename T, typename F>
void writeList(JsonWriter &j, const char *key, const std::vector<T> &items,
               F write) {
  j.key(key);
  j.beginArray();
  for (const T &item : items)
    write(j, item);
  j.endArray();
}

} // namespace

std::string tandem::runtime::writeManifest(const Manifest &m) {
  std::string text;
  JsonWriter j(text);
  j.beginObject();
  j.field("format", kManifestFormat);
  j.field("program", m.program);
  j.field("library", m.library);
  j.field("source", m.source);
  writeTarget(j, m.target);
  writeGrid(j, m.grid);
  writeList(j, "parameters", m.parameters, writeParameter);
  writeList(j, "inputs", m.inputs, writeInput);
  writeList(j, "outputs", m.outputs, [](JsonWriter &j, const OutputInfo &o) {
    j.oneLine().beginObject();
    j.field("index", o.index);
    j.field("fragment", o.fragment);
    j.field("result", o.result);
    j.endObject();
  });
  writeList(j, "fragments", m.fragments, writeFragment);
  writeList(j, "actions", m.actions, writeAction);
  writeMemory(j, m.memory);
  if (m.predictedMemory)
    writePrediction(j, *m.predictedMemory);
  if (!m.indexChecks.empty())
    writeList(j, "index_checks", m.indexChecks,
              [](JsonWriter &j, const IndexCheckInfo &c) {
                j.oneLine().beginObject();
                j.field("op", c.op);
                j.field("location", c.location);
                j.field("index", c.index);
                j.field("range", c.range);
                j.field("bound", c.bound);
                j.endObject();
              });
  j.endObject();
  return text;
}
