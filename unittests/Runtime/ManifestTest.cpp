//===- ManifestTest.cpp - the manifest written and read by one schema -----===//
//
// writeManifest and parseManifest are the compiler's and the runtime's ends
// of one contract: a manifest holding a value other than the default in
// every field, and every value of every enumeration, reads back equal
// (Manifest's operator== compares every written field). The reader's checks
// (format versions, sizes no machine can allocate, the memory plan) give
// their messages.
//
//===----------------------------------------------------------------------===//

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/MemoryPlan.h"

#include "gtest/gtest.h"

using namespace tandem::runtime;

namespace {

ArgumentInfo tensorArgument(ElementType dtype, std::vector<int64_t> shape) {
  ArgumentInfo a;
  a.dtype = dtype;
  a.shape = shape;
  a.bytes = elementTypeSize(dtype);
  for (int64_t size : shape)
    a.bytes *= size;
  return a;
}

ResultInfo tensorResult(ElementType dtype, std::vector<int64_t> shape) {
  ArgumentInfo a = tensorArgument(dtype, shape);
  ResultInfo r;
  r.dtype = a.dtype;
  r.shape = a.shape;
  r.bytes = a.bytes;
  return r;
}

ActionInfo run(const std::string &fragment, int64_t microbatch = -1) {
  ActionInfo a;
  a.op = ActionKind::Run;
  a.fragment = fragment;
  a.microbatch = microbatch;
  return a;
}

ActionInfo p2p(ActionKind op, SlotRef slot, int64_t channel, int64_t sequence) {
  ActionInfo a;
  a.op = op;
  a.slot = slot;
  a.peer = 1;
  a.channel = channel;
  a.sequence = sequence;
  a.dtype = ElementType::F32;
  a.shape = {2, 4};
  a.bytes = 32;
  a.wire = ElementType::BF16;
  return a;
}

/// Stage 0 of two, two microbatches: every field differs from its default.
Manifest base() {
  Manifest m;
  m.program = "pipeline";
  m.library = "rank0.so";
  m.source = "rank0.cpp";
  m.target = {TargetKind::Cpu, "x86-64-v3", {"avx", "avx2", "fma"}, 64};
  m.grid = {2, 1, 1, 2, 0, 0, 0};

  ParameterInfo w;
  w.name = "w";
  w.dtype = ElementType::F32;
  w.shape = {4, 8};
  w.bytes = 128;
  w.init = {tandem::rng::InitKind::Normal, 0.02, 0.5};
  w.updated = true;
  w.space = MemorySpace::Device;
  ParameterInfo e = w;
  e.name = "e";
  e.dtype = ElementType::BF16;
  e.shape = {16, 4};
  e.init = {tandem::rng::InitKind::Uniform, -0.5, 0.25};
  // A vocabulary of 13 rows stored padded to 16.
  e.logicalShape = {13, 4};
  EXPECT_TRUE(tandem::rng::setPadding(e.init, e.shape, e.logicalShape));
  e.updated = false;
  e.space = MemorySpace::Host;
  m.parameters = {w, e};

  InputInfo tokens;
  tokens.index = 3;
  tokens.dtype = ElementType::I32;
  tokens.microbatchShape = {2, 3};
  tokens.stepShape = {4, 3};
  tokens.microbatchBytes = 24;
  tokens.role = InputRole::Tokens;
  tokens.vocabulary = 16;
  tokens.space = MemorySpace::Device;
  InputInfo other;
  other.index = 5;
  other.dtype = ElementType::F64;
  other.microbatchShape = {2, 4};
  other.stepShape = {4, 4};
  other.microbatchBytes = 64;
  other.role = InputRole::Ambiguous;
  m.inputs = {tokens, other};
  m.outputs = {{2, "s0.opt", 1}};

  FragmentInfo fwd;
  fwd.name = "s0.fwd";
  fwd.symbol = "tandem_fwd_1";
  fwd.scratchSymbol = "tandem_fwd_1_scratch_bytes";
  fwd.kind = "fwd";
  fwd.perMicrobatch = true;
  fwd.stage = 3;
  fwd.chunk = 1;
  fwd.scratchBytes = 96;
  ArgumentInfo ids = tensorArgument(ElementType::I32, {2, 3});
  ids.kind = BindingKind::Input;
  ids.input = 3;
  ArgumentInfo table = tensorArgument(ElementType::BF16, {16, 4});
  table.kind = BindingKind::Param;
  table.param = "e";
  fwd.arguments = {ids, table};
  fwd.results = {tensorResult(ElementType::F32, {2, 4}),
                 tensorResult(ElementType::F32, {2, 4})};

  FragmentInfo bwd;
  bwd.name = "s0.bwd";
  bwd.symbol = "tandem_bwd_2";
  bwd.scratchSymbol = "tandem_bwd_2_scratch_bytes";
  bwd.kind = "bwd";
  bwd.perMicrobatch = true;
  ArgumentInfo stash = tensorArgument(ElementType::F32, {2, 4});
  stash.kind = BindingKind::Slot;
  stash.slot = {"s0.fwd", 1, -1};
  stash.rule = SlotRule::SameMicrobatch;
  stash.local = true;
  ArgumentInfo grad = stash;
  grad.slot = {"s1.bwd", 0, -1};
  grad.local = false;
  ArgumentInfo x = tensorArgument(ElementType::F64, {2, 4});
  x.kind = BindingKind::Input;
  x.input = 5;
  bwd.arguments = {stash, grad, x};
  bwd.results = {tensorResult(ElementType::F32, {4, 8})};

  FragmentInfo opt;
  opt.name = "s0.opt";
  opt.symbol = "tandem_opt_3";
  opt.scratchSymbol = "tandem_opt_3_scratch_bytes";
  opt.kind = "optimizer";
  ArgumentInfo sum = tensorArgument(ElementType::F32, {4, 8});
  sum.kind = BindingKind::Slot;
  sum.slot = {"s0.bwd", 0, -1};
  sum.rule = SlotRule::SumMicrobatches;
  sum.local = true;
  sum.accumulatedBy = Accumulation::Fragment;
  ArgumentInfo weight = tensorArgument(ElementType::F32, {4, 8});
  weight.param = "w";
  ArgumentInfo step = stash;
  step.slot = {"s0.fwd", 0, -1};
  step.rule = SlotRule::StepValue;
  opt.arguments = {sum, weight};
  ResultInfo update = tensorResult(ElementType::F32, {4, 8});
  update.update = "w";
  update.inPlaceOf = 1;
  ResultInfo loss = tensorResult(ElementType::F32, {});
  loss.output = 2;
  opt.results = {update, loss};

  FragmentInfo after; // Reads a once-per-step slot (step_value).
  after.name = "s0.after";
  after.symbol = "tandem_after_4";
  after.scratchSymbol = "tandem_after_4_scratch_bytes";
  after.kind = "other";
  ArgumentInfo value = tensorArgument(ElementType::F32, {});
  value.kind = BindingKind::Slot;
  value.slot = {"s0.opt", 1, -1};
  value.rule = SlotRule::StepValue;
  value.local = true;
  after.arguments = {value};
  after.results = {tensorResult(ElementType::F32, {})};
  m.fragments = {fwd, bwd, opt, after};

  m.actions = {run("s0.fwd", 0),
               p2p(ActionKind::Send, {"s0.fwd", 0, 0}, 0, 0),
               run("s0.fwd", 1),
               p2p(ActionKind::Send, {"s0.fwd", 0, 1}, 0, 1),
               p2p(ActionKind::Recv, {"s1.bwd", 0, 0}, 1, 0),
               run("s0.bwd", 0),
               p2p(ActionKind::Recv, {"s1.bwd", 0, 1}, 1, 1),
               run("s0.bwd", 1),
               run("s0.opt")};
  ActionInfo reduce;
  reduce.op = ActionKind::AllReduce;
  reduce.slot = {"s0.opt", 1, -1};
  reduce.dtype = ElementType::F32;
  reduce.bytes = 4;
  reduce.group = {1, 0};
  reduce.reduction = "sum";
  ActionInfo broadcast = reduce;
  broadcast.op = ActionKind::Broadcast;
  broadcast.reduction.clear();
  broadcast.root = 1;
  broadcast.sequence = 1;
  m.actions.push_back(reduce);
  m.actions.push_back(broadcast);
  m.actions.push_back(run("s0.after"));

  std::string error;
  std::optional<MemoryPlanInfo> plan = planRankMemory(describeRank(m), error);
  EXPECT_TRUE(plan) << error;
  m.memory = *plan;
  m.memory.space = MemorySpace::Device;

  PredictedMemoryInfo predicted;
  predicted.analysis = "mpmd-memory";
  predicted.peakBytes = 1;
  predicted.parameters = 2;
  predicted.parameterCopies = 3;
  predicted.optimizerState = 4;
  predicted.gradients = 5;
  predicted.stash = 6;
  predicted.stashPerMicrobatch = 7;
  predicted.peakInFlight = 8;
  predicted.temporaries = 9;
  m.predictedMemory = predicted;
  m.indexChecks = {{"nn.embedding", "model.mlir:3:7", "id", "vocabulary", 13},
                   {"nn.cross_entropy", "", "target", "classes", 13}};
  return m;
}

/// writeManifest, then parseManifest, which must succeed.
Manifest roundTrip(const Manifest &m) {
  std::string error;
  std::optional<Manifest> read =
      parseManifest(writeManifest(m), "rank0.json", error);
  EXPECT_TRUE(read) << error << "\n" << writeManifest(m);
  return read.value_or(Manifest{});
}

/// The manifest reads back equal; on failure, the texts show where.
#define EXPECT_ROUND_TRIP(m)                                                   \
  do {                                                                         \
    Manifest read = roundTrip(m);                                              \
    EXPECT_EQ(writeManifest(read), writeManifest(m));                          \
    EXPECT_TRUE(read == (m));                                                  \
  } while (false)

/// The reader's error for the written text of `m` with `from` replaced by
/// `to` (once).
std::string errorAfter(const Manifest &m, const std::string &from,
                       const std::string &to) {
  std::string text = writeManifest(m);
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  std::string error;
  EXPECT_FALSE(parseManifest(text, "rank0.json", error)) << text;
  return error;
}

TEST(Manifest, RoundTripKeepsEveryField) {
  Manifest m = base();
  // Every field of the base differs from its default, so a field the
  // writer dropped or the reader ignored would read back different.
  Manifest defaults;
  EXPECT_NE(m.target, defaults.target);
  EXPECT_ROUND_TRIP(m);
}

TEST(Manifest, RoundTripKeepsEveryEnumerationValue) {
  for (ElementType type :
       {ElementType::F32, ElementType::F64, ElementType::I32, ElementType::I64,
        ElementType::BF16, ElementType::F16, ElementType::I8,
        ElementType::F8E4M3FN, ElementType::F8E5M2}) {
    Manifest m = base();
    m.parameters[1].dtype = type;
    m.parameters[1].bytes = 64 * elementTypeSize(type);
    EXPECT_ROUND_TRIP(m);
    EXPECT_EQ(parseElementType(elementTypeName(type)), type);
  }
  for (InputRole role : {InputRole::Tokens, InputRole::Targets,
                         InputRole::Other, InputRole::Ambiguous}) {
    Manifest m = base();
    m.inputs[1].role = role;
    EXPECT_ROUND_TRIP(m);
  }
  for (tandem::rng::InitKind kind :
       {tandem::rng::InitKind::Zeros, tandem::rng::InitKind::Ones,
        tandem::rng::InitKind::Normal, tandem::rng::InitKind::Uniform}) {
    Manifest m = base();
    m.parameters[0].init.kind = kind;
    EXPECT_ROUND_TRIP(m);
  }
  Manifest flipped = base();
  flipped.target.kind = TargetKind::Cuda;
  flipped.target.arch = "sm_90";
  flipped.target.features.clear();
  flipped.parameters[0].space = MemorySpace::Host;
  flipped.parameters[1].space = MemorySpace::Device;
  flipped.inputs[0].space = MemorySpace::Host;
  flipped.inputs[1].space = MemorySpace::Device;
  flipped.memory.space = MemorySpace::Host;
  flipped.fragments[2].arguments[0].accumulatedBy = Accumulation::Runtime;
  flipped.parameters[0].updated = false;
  flipped.fragments[0].perMicrobatch = true;
  flipped.fragments[1].arguments[0].local = false;
  // The runtime's sum needs a slot per microbatch: a plan of its own.
  std::string error;
  std::optional<MemoryPlanInfo> plan =
      planRankMemory(describeRank(flipped), error);
  ASSERT_TRUE(plan) << error;
  flipped.memory = *plan;
  flipped.memory.space = MemorySpace::Host;
  EXPECT_ROUND_TRIP(flipped);
}

TEST(Manifest, RoundTripKeepsAbsentOptionalFields) {
  Manifest m = base();
  m.inputs[0].vocabulary.reset();
  m.fragments[2].results[1].output.reset();
  m.outputs.clear();
  m.predictedMemory.reset();
  m.indexChecks.clear();
  EXPECT_ROUND_TRIP(m);
  EXPECT_EQ(writeManifest(m).find("index_checks"), std::string::npos);
  // A result without in_place_of gets a slot buffer: plan again.
  Manifest planned = base();
  planned.fragments[2].results[0].inPlaceOf.reset();
  std::string error;
  std::optional<MemoryPlanInfo> plan =
      planRankMemory(describeRank(planned), error);
  ASSERT_TRUE(plan) << error;
  planned.memory = *plan;
  EXPECT_ROUND_TRIP(planned);
}

TEST(Manifest, TextPutsEachEntryOnOneLine) {
  std::string text = writeManifest(base());
  EXPECT_EQ(text.rfind("{\n  \"format\": \"tandem-rank-v2\",\n", 0), 0u);
  EXPECT_NE(text.find("\n    {\"op\":\"send\",\"slot\":{\"fragment\":\"s0."
                      "fwd\",\"result\":0,\"microbatch\":1},\"peer\":1,"
                      "\"channel\":0,\"sequence\":1,\"dtype\":\"f32\","
                      "\"shape\":[2,4],\"bytes\":32,\"wire\":\"bf16\"},\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"init\":{\"kind\":\"normal\",\"a\":0.02,\"b\":0.5}"),
            std::string::npos);
  EXPECT_NE(text.find("\"features\": [\"avx\",\"avx2\",\"fma\"]"),
            std::string::npos);
  EXPECT_NE(
      text.find("\n    {\"op\":\"nn.embedding\",\"location\":\"model.mlir:"
                "3:7\",\"index\":\"id\",\"range\":\"vocabulary\","
                "\"bound\":13},\n"),
      std::string::npos)
      << text;
  EXPECT_EQ(text.back(), '\n');
}

TEST(Manifest, OlderAndUnknownFormatsAreRefused) {
  Manifest m = base();
  EXPECT_EQ(errorAfter(m, "tandem-rank-v2", "tandem-rank-v1"),
            "rank0.json: manifest format 'tandem-rank-v1' was written by an "
            "older tandemc; this runtime reads tandem-rank-v2: compile the "
            "model again with this tandemc");
  EXPECT_EQ(errorAfter(m, "tandem-rank-v2", "tandem-rank-v9"),
            "rank0.json: unsupported manifest format 'tandem-rank-v9' (this "
            "runtime reads tandem-rank-v2)");
}

TEST(Manifest, SizesNoMachineCanAllocateAreRefused) {
  Manifest m = base();
  EXPECT_EQ(errorAfter(m, "\"shape\":[4,8],\"bytes\":128",
                       "\"shape\":[99999999999,99999999999],\"bytes\":128"),
            "rank0.json: parameters[0]: a tensor of shape "
            "[99999999999,99999999999] and type f32 holds more than 2^48 "
            "bytes, more than any machine can allocate");
  EXPECT_EQ(errorAfter(m, "\"arena_bytes\": ",
                       "\"arena_bytes\": 1152921504606846976, \"x\": "),
            "rank0.json: memory: field 'arena_bytes' is 1152921504606846976, "
            "outside [0, 2^48] bytes");
  EXPECT_EQ(errorAfter(m, "\"scratch_bytes\": 96", "\"scratch_bytes\": -1"),
            "rank0.json: fragments[0]: field 'scratch_bytes' is -1, outside "
            "[0, 2^48] bytes");
  EXPECT_EQ(errorAfter(m, "\"microbatches\": 2", "\"microbatches\": 0"),
            "rank0.json: grid: stages, chunks, replicas and microbatches must "
            "be in [1, 2^20]");
}

TEST(Manifest, FieldsAreChecked) {
  Manifest m = base();
  EXPECT_EQ(errorAfter(m, "\"dtype\":\"bf16\"", "\"dtype\":\"f4\""),
            "rank0.json: parameters[1]: unknown element type 'f4'");
  EXPECT_EQ(
      errorAfter(m, "\"logical_shape\":[13,4]", "\"logical_shape\":[13,3]"),
      "rank0.json: parameters[1]: logical_shape must have the shape's "
      "rank, sizes in [1, the shape's], and differ from it in at most "
      "one dimension");
  EXPECT_EQ(errorAfter(m, "\"kind\": \"cpu\"", "\"kind\": \"tpu\""),
            "rank0.json: target: unknown target kind 'tpu'");
  EXPECT_EQ(errorAfter(m, "\"space\":\"device\"", "\"space\":\"disk\""),
            "rank0.json: parameters[0]: unknown memory space 'disk'");
  EXPECT_EQ(errorAfter(m, "\"accumulated_by\":\"fragment\"",
                       "\"accumulated_by\":\"nobody\""),
            "rank0.json: fragments[2]: arguments[0]: unknown accumulation "
            "'nobody'");
  EXPECT_EQ(errorAfter(m, "\"rule\":\"step_value\",\"local\":true",
                       "\"rule\":\"step_value\",\"local\":true,"
                       "\"accumulated_by\":\"runtime\""),
            "rank0.json: fragments[3]: arguments[0]: accumulated_by belongs "
            "to sum_microbatches arguments only");
  EXPECT_EQ(errorAfter(m, "\"root\":1", "\"root\":7"),
            "rank0.json: actions[10]: root outside the group");
  EXPECT_EQ(errorAfter(m, "{\"op\":\"run\",\"fragment\":\"s0.after\"}",
                       "{\"op\":\"jump\"}"),
            "rank0.json: actions[11]: unknown action 'jump'");
  EXPECT_EQ(errorAfter(m, "\"range\":\"classes\",\"bound\":13",
                       "\"range\":\"classes\",\"bound\":0"),
            "rank0.json: index_checks[1]: bound must be positive");
  EXPECT_EQ(errorAfter(m, "\"index\":\"target\",", ""),
            "rank0.json: index_checks[1]: missing field 'index'");
}

TEST(Manifest, TheMemoryPlanIsCheckedAgainstTheTarget) {
  Manifest m = base();
  m.target.alignment = 128;
  EXPECT_EQ(errorAfter(m, "\"alignment\": 64", "\"alignment\": 64"),
            "rank0.json: memory: alignment 64 is not a power of two of at "
            "least the target's 128");
  // A plan made with the target's alignment reads back.
  RankDescription rank = describeRank(m);
  rank.alignment = 128;
  std::string error;
  std::optional<MemoryPlanInfo> plan = planRankMemory(rank, error);
  ASSERT_TRUE(plan) << error;
  m.memory = *plan;
  for (const PlanBufferInfo &b : m.memory.buffers)
    EXPECT_EQ(b.offset % 128, 0u);
  EXPECT_ROUND_TRIP(m);
}

TEST(Manifest, CheckMemoryPlanNamesTheBuffer) {
  Manifest m = base();
  ASSERT_EQ(checkMemoryPlan(m), "");
  Manifest moved = base();
  moved.memory.buffers[0].offset += 8;
  EXPECT_EQ(checkMemoryPlan(moved),
            "memory: buffers[0] (scratch of actions[0]): offset " +
                std::to_string(moved.memory.buffers[0].offset) +
                " is not 64-byte aligned");
  Manifest dropped = base();
  dropped.memory.buffers.erase(dropped.memory.buffers.begin());
  EXPECT_EQ(checkMemoryPlan(dropped),
            "memory: no buffer for the scratch of s0.fwd (actions[0])");
}

} // namespace
