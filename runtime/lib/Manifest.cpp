//===- Manifest.cpp - reading per-rank manifests (tandem-rank-v2) ---------===//

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/FileIO.h"
#include "tandem/Runtime/MemoryPlan.h"

#include "ManifestNames.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <tuple>

using namespace tandem::runtime;
using json = nlohmann::json;

namespace {

struct TypeName {
  ElementType type;
  const char *name;
  size_t bytes;
};

constexpr TypeName kTypes[] = {
    {ElementType::F32, "f32", 4},      {ElementType::F64, "f64", 8},
    {ElementType::I32, "i32", 4},      {ElementType::I64, "i64", 8},
    {ElementType::BF16, "bf16", 2},    {ElementType::F16, "f16", 2},
    {ElementType::I8, "i8", 1},        {ElementType::F8E4M3FN, "f8E4M3FN", 1},
    {ElementType::F8E5M2, "f8E5M2", 1}};

} // namespace

const char *tandem::runtime::elementTypeName(ElementType type) {
  for (const TypeName &t : kTypes)
    if (t.type == type)
      return t.name;
  return "?";
}

size_t tandem::runtime::elementTypeSize(ElementType type) {
  for (const TypeName &t : kTypes)
    if (t.type == type)
      return t.bytes;
  return 0;
}

std::optional<ElementType>
tandem::runtime::parseElementType(const std::string &name) {
  for (const TypeName &t : kTypes)
    if (name == t.name)
      return t.type;
  return std::nullopt;
}

const char *tandem::runtime::memorySpaceName(MemorySpace space) {
  return names::nameOf(names::kSpaces, space);
}

const char *tandem::runtime::targetKindName(TargetKind kind) {
  return names::nameOf(names::kTargetKinds, kind);
}

namespace {

struct ManifestError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Field access with errors naming the path of the field.
class Reader {
public:
  explicit Reader(std::string what) : what(std::move(what)) {}

  [[noreturn]] void fail(const std::string &where,
                         const std::string &message) const {
    throw ManifestError(what + ": " + (where.empty() ? "" : where + ": ") +
                        message);
  }

  const json &field(const json &object, const std::string &where,
                    const char *key) const {
    if (!object.is_object())
      fail(where, "expected an object");
    auto it = object.find(key);
    if (it == object.end())
      fail(where, std::string("missing field '") + key + "'");
    return *it;
  }

  /// Field `key`, which must satisfy `is` (a json type test) and is
  /// described as `kind` in the error.
  const json &typed(const json &object, const std::string &where,
                    const char *key, bool (json::*is)() const noexcept,
                    const char *kind) const {
    const json &value = field(object, where, key);
    if (!(value.*is)())
      fail(where, std::string("field '") + key + "' must be " + kind);
    return value;
  }

  std::string string(const json &object, const std::string &where,
                     const char *key) const {
    return typed(object, where, key, &json::is_string, "a string")
        .get<std::string>();
  }

  int64_t integer(const json &object, const std::string &where,
                  const char *key) const {
    return typed(object, where, key, &json::is_number_integer, "an integer")
        .get<int64_t>();
  }

  double number(const json &object, const std::string &where,
                const char *key) const {
    return typed(object, where, key, &json::is_number, "a number")
        .get<double>();
  }

  bool boolean(const json &object, const std::string &where,
               const char *key) const {
    return typed(object, where, key, &json::is_boolean, "a boolean")
        .get<bool>();
  }

  const json &array(const json &object, const std::string &where,
                    const char *key) const {
    return typed(object, where, key, &json::is_array, "an array");
  }

  std::vector<int64_t> shape(const json &object, const std::string &where,
                             const char *key) const {
    std::vector<int64_t> result;
    for (const json &dim : array(object, where, key)) {
      if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
        fail(where, std::string("field '") + key +
                        "' must hold non-negative integers");
      result.push_back(dim.get<int64_t>());
    }
    return result;
  }

  /// Field `key`, a string naming one of `table`'s values (ManifestNames.h);
  /// anything else is "unknown <what> '<text>'".
  template <typename E, size_t N>
  E choice(const json &object, const std::string &where, const char *key,
           const names::Named<E> (&table)[N], const char *what) const {
    std::string name = string(object, where, key);
    for (const names::Named<E> &entry : table)
      if (name == entry.name)
        return entry.value;
    fail(where, std::string("unknown ") + what + " '" + name + "'");
  }

  ElementType dtype(const json &object, const std::string &where,
                    const char *key) const {
    std::string name = string(object, where, key);
    if (std::optional<ElementType> type = parseElementType(name))
      return *type;
    fail(where, "unknown element type '" + name + "'");
  }

  MemorySpace space(const json &object, const std::string &where) const {
    return choice(object, where, "space", names::kSpaces, "memory space");
  }

  /// A byte count no larger than kMaxBytes.
  uint64_t size(const json &object, const std::string &where,
                const char *key) const {
    int64_t value = integer(object, where, key);
    if (value < 0 || static_cast<uint64_t>(value) > kMaxBytes)
      fail(where, std::string("field '") + key + "' is " +
                      std::to_string(value) + ", outside [0, 2^48] bytes");
    return static_cast<uint64_t>(value);
  }

  /// Checks `bytes` against the shape and type, in checked arithmetic: a
  /// tensor of more than kMaxBytes (256 TiB) is refused, as no machine can
  /// allocate it.
  uint64_t bytes(const json &object, const std::string &where,
                 const std::vector<int64_t> &shape, ElementType type,
                 const char *key = "bytes") const {
    int64_t value = integer(object, where, key);
    uint64_t expected = elementTypeSize(type);
    for (int64_t dim : shape)
      if (__builtin_mul_overflow(expected, static_cast<uint64_t>(dim),
                                 &expected) ||
          expected > kMaxBytes)
        fail(where, "a tensor of shape " + shapeText(shape) + " and type " +
                        elementTypeName(type) +
                        " holds more than 2^48 bytes, more than any machine "
                        "can allocate");
    if (value < 0 || static_cast<uint64_t>(value) != expected)
      fail(where, std::string("field '") + key + "' is " +
                      std::to_string(value) + ", the shape and type need " +
                      std::to_string(expected));
    return expected;
  }

  static std::string shapeText(const std::vector<int64_t> &shape) {
    std::string text = "[";
    for (size_t i = 0; i < shape.size(); ++i)
      text += (i ? "," : "") + std::to_string(shape[i]);
    return text + "]";
  }

  SlotRef slot(const json &object, const std::string &where,
               bool withMicrobatch) const {
    const json &value = field(object, where, "slot");
    std::string inner = where + ": slot";
    SlotRef ref;
    ref.fragment = string(value, inner, "fragment");
    ref.result = integer(value, inner, "result");
    if (withMicrobatch && value.contains("microbatch"))
      ref.microbatch = integer(value, inner, "microbatch");
    return ref;
  }

private:
  std::string what;
};

std::string at(const char *list, size_t index) {
  return std::string(list) + "[" + std::to_string(index) + "]";
}

/// Reads the "memory" object and checks it against the action list
/// (checkMemoryPlan): a corrupt plan must be an error here, never memory
/// corruption in a step.
void parseMemory(const json &root, const Reader &r, Manifest &m) {
  const json &memory = r.field(root, "", "memory");
  MemoryPlanInfo &plan = m.memory;
  plan.space = r.space(memory, "memory");
  int64_t alignment = r.integer(memory, "memory", "alignment");
  if (alignment < static_cast<int64_t>(m.target.alignment) ||
      (alignment & (alignment - 1)) != 0)
    r.fail("memory", "alignment " + std::to_string(alignment) +
                         " is not a power of two of at least the target's " +
                         std::to_string(m.target.alignment));
  plan.alignment = static_cast<uint64_t>(alignment);
  plan.arenaBytes = r.size(memory, "memory", "arena_bytes");
  plan.naiveBytes = r.size(memory, "memory", "naive_bytes");

  const json &buffers = r.array(memory, "memory", "buffers");
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::string where = "memory: " + at("buffers", i);
    const json &b = buffers[i];
    PlanBufferInfo info;
    info.kind = r.choice(b, where, "kind", names::kBufferKinds, "buffer kind");
    if (info.kind == PlanBufferKind::Slot) {
      info.slot.fragment = r.string(b, where, "fragment");
      info.slot.result = r.integer(b, where, "result");
      if (b.contains("microbatch"))
        info.slot.microbatch = r.integer(b, where, "microbatch");
    } else {
      info.action = r.integer(b, where, "action");
      if (info.kind == PlanBufferKind::Accumulator)
        info.argument = r.integer(b, where, "argument");
    }
    info.offset = r.size(b, where, "offset");
    info.bytes = r.size(b, where, "bytes");
    info.first = r.integer(b, where, "first");
    info.last = r.integer(b, where, "last");
    plan.buffers.push_back(std::move(info));
  }
  std::string violation = checkMemoryPlan(m);
  if (!violation.empty())
    r.fail("", violation);
}

TargetInfo parseTarget(const json &root, const Reader &r) {
  const json &target = r.field(root, "", "target");
  TargetInfo info;
  info.kind =
      r.choice(target, "target", "kind", names::kTargetKinds, "target kind");
  info.arch = r.string(target, "target", "arch");
  for (const json &feature : r.array(target, "target", "features")) {
    if (!feature.is_string())
      r.fail("target", "field 'features' must hold strings");
    info.features.push_back(feature.get<std::string>());
  }
  int64_t alignment = r.integer(target, "target", "alignment");
  if (alignment < 64 || alignment > 4096 || (alignment & (alignment - 1)) != 0)
    r.fail("target", "alignment " + std::to_string(alignment) +
                         " is not a power of two in [64, 4096] (the ABI "
                         "needs 64-byte aligned buffers)");
  info.alignment = static_cast<uint64_t>(alignment);
  return info;
}

Manifest parse(const json &root, const Reader &r) {
  Manifest m;
  std::string format = r.string(root, "", "format");
  if (format == "tandem-rank-v1")
    r.fail("", "manifest format 'tandem-rank-v1' was written by an older "
               "tandemc; this runtime reads " +
                   std::string(kManifestFormat) +
                   ": compile the model again with this tandemc");
  if (format != kManifestFormat)
    r.fail("", "unsupported manifest format '" + format +
                   "' (this runtime reads " + kManifestFormat + ")");
  m.program = r.string(root, "", "program");
  m.library = r.string(root, "", "library");
  m.source = r.string(root, "", "source");
  m.target = parseTarget(root, r);

  const json &grid = r.field(root, "", "grid");
  m.grid.stages = r.integer(grid, "grid", "stages");
  m.grid.chunks = r.integer(grid, "grid", "chunks");
  m.grid.replicas = r.integer(grid, "grid", "replicas");
  m.grid.microbatches = r.integer(grid, "grid", "microbatches");
  m.grid.rank = r.integer(grid, "grid", "rank");
  m.grid.stage = r.integer(grid, "grid", "stage");
  m.grid.replica = r.integer(grid, "grid", "replica");
  // Bounded first, so that the product below cannot overflow.
  constexpr int64_t kMaxGrid = int64_t(1) << 20;
  for (int64_t count :
       {m.grid.stages, m.grid.chunks, m.grid.replicas, m.grid.microbatches})
    if (count < 1 || count > kMaxGrid)
      r.fail("grid", "stages, chunks, replicas and microbatches must be in "
                     "[1, 2^20]");
  if (m.grid.rank < 0 || m.grid.rank >= m.grid.stages * m.grid.replicas ||
      m.grid.stage < 0 || m.grid.stage >= m.grid.stages || m.grid.replica < 0 ||
      m.grid.replica >= m.grid.replicas)
    r.fail("grid", "inconsistent grid");

  const json &parameters = r.array(root, "", "parameters");
  for (size_t i = 0; i < parameters.size(); ++i) {
    std::string where = at("parameters", i);
    const json &p = parameters[i];
    ParameterInfo info;
    info.name = r.string(p, where, "name");
    info.dtype = r.dtype(p, where, "dtype");
    info.shape = r.shape(p, where, "shape");
    info.bytes = r.bytes(p, where, info.shape, info.dtype);
    const json &init = r.field(p, where, "init");
    info.init.kind = r.choice(init, where + ": init", "kind", names::kInitKinds,
                              "init kind");
    info.init.a = r.number(init, where + ": init", "a");
    info.init.b = r.number(init, where + ": init", "b");
    if (init.contains("seed")) {
      int64_t seed = r.integer(init, where + ": init", "seed");
      if (seed < 0)
        r.fail(where + ": init", "seed must be non-negative");
      info.init.hasSeed = true;
      info.init.seed = static_cast<uint64_t>(seed);
    }
    if (!tandem::rng::setMatrix(info.init, info.shape))
      r.fail(where, "an orthonormal parameter must be a matrix (rank >= 2) "
                    "with at least as many rows as columns");
    if (p.contains("logical_shape")) {
      info.logicalShape = r.shape(p, where, "logical_shape");
      if (!tandem::rng::setPadding(info.init, info.shape, info.logicalShape))
        r.fail(where, "logical_shape must have the shape's rank, sizes in "
                      "[1, the shape's], and differ from it in at most one "
                      "dimension");
    }
    info.updated = r.boolean(p, where, "updated");
    info.space = r.space(p, where);
    m.parameters.push_back(std::move(info));
  }

  const json &inputs = r.array(root, "", "inputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string where = at("inputs", i);
    const json &in = inputs[i];
    InputInfo info;
    info.index = r.integer(in, where, "index");
    info.dtype = r.dtype(in, where, "dtype");
    info.microbatchShape = r.shape(in, where, "microbatch_shape");
    info.stepShape = r.shape(in, where, "step_shape");
    info.microbatchBytes = r.bytes(in, where, info.microbatchShape, info.dtype,
                                   "microbatch_bytes");
    std::vector<int64_t> expected = info.microbatchShape;
    if (expected.empty())
      r.fail(where, "a step input needs at least one dimension");
    expected[0] *= m.grid.microbatches;
    if (expected != info.stepShape)
      r.fail(where, "step_shape is not microbatch_shape with dimension 0 "
                    "times the microbatch count");
    info.role = r.choice(in, where, "role", names::kRoles, "role");
    if (in.contains("vocabulary")) {
      info.vocabulary = r.integer(in, where, "vocabulary");
      if (*info.vocabulary <= 0)
        r.fail(where, "vocabulary must be positive");
    }
    info.space = r.space(in, where);
    m.inputs.push_back(std::move(info));
  }

  const json &outputs = r.array(root, "", "outputs");
  for (size_t i = 0; i < outputs.size(); ++i) {
    std::string where = at("outputs", i);
    OutputInfo info;
    info.index = r.integer(outputs[i], where, "index");
    info.fragment = r.string(outputs[i], where, "fragment");
    info.result = r.integer(outputs[i], where, "result");
    m.outputs.push_back(std::move(info));
  }

  const json &fragments = r.array(root, "", "fragments");
  for (size_t i = 0; i < fragments.size(); ++i) {
    std::string where = at("fragments", i);
    const json &f = fragments[i];
    FragmentInfo info;
    info.name = r.string(f, where, "name");
    info.symbol = r.string(f, where, "symbol");
    info.scratchSymbol = r.string(f, where, "scratch_symbol");
    info.kind = r.string(f, where, "kind");
    info.perMicrobatch = r.boolean(f, where, "per_microbatch");
    info.stage = r.integer(f, where, "stage");
    info.chunk = r.integer(f, where, "chunk");
    info.scratchBytes = r.size(f, where, "scratch_bytes");
    const json &args = r.array(f, where, "arguments");
    for (size_t a = 0; a < args.size(); ++a) {
      std::string aw = where + ": " + at("arguments", a);
      const json &arg = args[a];
      ArgumentInfo ai;
      ai.dtype = r.dtype(arg, aw, "dtype");
      ai.shape = r.shape(arg, aw, "shape");
      ai.bytes = r.bytes(arg, aw, ai.shape, ai.dtype);
      int bindings =
          arg.contains("param") + arg.contains("input") + arg.contains("slot");
      if (bindings != 1)
        r.fail(aw, "needs exactly one binding: param, input or slot");
      if (arg.contains("param")) {
        ai.kind = BindingKind::Param;
        ai.param = r.string(arg, aw, "param");
      } else if (arg.contains("input")) {
        ai.kind = BindingKind::Input;
        ai.input = r.integer(arg, aw, "input");
      } else {
        ai.kind = BindingKind::Slot;
        ai.slot = r.slot(arg, aw, /*withMicrobatch=*/false);
        ai.rule = r.choice(arg, aw, "rule", names::kRules, "rule");
        ai.local = r.boolean(arg, aw, "local");
        if (ai.rule == SlotRule::SumMicrobatches)
          ai.accumulatedBy = r.choice(arg, aw, "accumulated_by",
                                      names::kAccumulations, "accumulation");
        else if (arg.contains("accumulated_by"))
          r.fail(aw, "accumulated_by belongs to sum_microbatches arguments "
                     "only");
      }
      info.arguments.push_back(std::move(ai));
    }
    const json &results = r.array(f, where, "results");
    for (size_t k = 0; k < results.size(); ++k) {
      std::string rw = where + ": " + at("results", k);
      const json &res = results[k];
      ResultInfo ri;
      ri.dtype = r.dtype(res, rw, "dtype");
      ri.shape = r.shape(res, rw, "shape");
      ri.bytes = r.bytes(res, rw, ri.shape, ri.dtype);
      if (res.contains("update"))
        ri.update = r.string(res, rw, "update");
      if (res.contains("output"))
        ri.output = r.integer(res, rw, "output");
      if (res.contains("in_place_of")) {
        int64_t a = r.integer(res, rw, "in_place_of");
        const ArgumentInfo *arg =
            a >= 0 && a < static_cast<int64_t>(info.arguments.size())
                ? &info.arguments[a]
                : nullptr;
        if (!arg || !ri.update || ri.output || info.perMicrobatch ||
            arg->kind != BindingKind::Param || arg->param != *ri.update ||
            arg->bytes != ri.bytes)
          r.fail(rw, "in_place_of " + std::to_string(a) +
                         " must name an argument bound to the parameter this "
                         "once-per-step result updates, of its size");
        ri.inPlaceOf = a;
      }
      info.results.push_back(std::move(ri));
    }
    m.fragments.push_back(std::move(info));
  }

  const json &actions = r.array(root, "", "actions");
  for (size_t i = 0; i < actions.size(); ++i) {
    std::string where = at("actions", i);
    const json &a = actions[i];
    ActionInfo info;
    info.op = r.choice(a, where, "op", names::kActions, "action");
    bool p2p = info.op == ActionKind::Send || info.op == ActionKind::Recv;
    if (info.op == ActionKind::Run) {
      info.fragment = r.string(a, where, "fragment");
      if (a.contains("microbatch"))
        info.microbatch = r.integer(a, where, "microbatch");
    } else {
      info.slot = r.slot(a, where, /*withMicrobatch=*/true);
      if (p2p) {
        info.peer = r.integer(a, where, "peer");
        info.channel = r.integer(a, where, "channel");
      } else {
        if (info.op == ActionKind::AllReduce)
          info.reduction = r.string(a, where, "reduction");
        else
          info.root = r.integer(a, where, "root");
        for (const json &member : r.array(a, where, "group")) {
          if (!member.is_number_integer())
            r.fail(where, "field 'group' must hold integers");
          info.group.push_back(member.get<int64_t>());
        }
      }
      info.sequence = r.integer(a, where, "sequence");
      info.dtype = r.dtype(a, where, "dtype");
      info.shape = r.shape(a, where, "shape");
      info.bytes = r.bytes(a, where, info.shape, info.dtype);
      if (p2p)
        info.wire = r.dtype(a, where, "wire");
    }
    m.actions.push_back(std::move(info));
  }

  // Cross-references.
  for (size_t i = 0; i < m.outputs.size(); ++i) {
    const OutputInfo &out = m.outputs[i];
    int64_t f = m.findFragment(out.fragment);
    if (f < 0 || out.result < 0 ||
        out.result >= static_cast<int64_t>(m.fragments[f].results.size()))
      r.fail(at("outputs", i), "names no result of a fragment of this rank");
  }
  for (const FragmentInfo &f : m.fragments)
    for (size_t a = 0; a < f.arguments.size(); ++a) {
      const ArgumentInfo &arg = f.arguments[a];
      std::string where = "fragment '" + f.name + "': " + at("arguments", a);
      if (arg.kind == BindingKind::Param && m.findParameter(arg.param) < 0)
        r.fail(where, "unknown parameter '" + arg.param + "'");
      if (arg.kind == BindingKind::Input) {
        int64_t in = m.findInput(arg.input);
        if (in < 0)
          r.fail(where, "unknown step input " + std::to_string(arg.input));
        if (m.inputs[in].microbatchBytes != arg.bytes ||
            m.inputs[in].dtype != arg.dtype)
          r.fail(where,
                 "type differs from step input " + std::to_string(arg.input));
      }
    }
  for (size_t i = 0; i < m.actions.size(); ++i) {
    const ActionInfo &a = m.actions[i];
    if (a.op == ActionKind::Run && m.findFragment(a.fragment) < 0)
      r.fail(at("actions", i), "runs unknown fragment '" + a.fragment + "'");
    int64_t ranks = m.grid.stages * m.grid.replicas;
    if ((a.op == ActionKind::Send || a.op == ActionKind::Recv) &&
        (a.peer < 0 || a.peer >= ranks))
      r.fail(at("actions", i), "peer outside the grid");
    for (int64_t member : a.group)
      if (member < 0 || member >= ranks)
        r.fail(at("actions", i), "group member outside the grid");
    if (a.op == ActionKind::Broadcast &&
        std::find(a.group.begin(), a.group.end(), a.root) == a.group.end())
      r.fail(at("actions", i), "root outside the group");
  }
  parseMemory(root, r, m);
  if (root.contains("predicted_memory")) {
    const json &p = root["predicted_memory"];
    const char *where = "predicted_memory";
    PredictedMemoryInfo info;
    info.analysis = r.string(p, where, "analysis");
    auto bytes = [&](const char *key) { return r.size(p, where, key); };
    info.peakBytes = bytes("peak_bytes");
    info.parameters = bytes("parameters");
    info.parameterCopies = bytes("parameter_copies");
    info.optimizerState = bytes("optimizer_state");
    info.gradients = bytes("gradients");
    info.stash = bytes("stash");
    info.stashPerMicrobatch = bytes("stash_per_microbatch");
    info.peakInFlight = bytes("peak_in_flight");
    info.temporaries = bytes("temporaries");
    m.predictedMemory = std::move(info);
  }
  if (root.contains("index_checks")) {
    const json &checks = r.array(root, "", "index_checks");
    for (size_t i = 0; i < checks.size(); ++i) {
      std::string where = at("index_checks", i);
      IndexCheckInfo info;
      info.op = r.string(checks[i], where, "op");
      info.location = r.string(checks[i], where, "location");
      info.index = r.string(checks[i], where, "index");
      info.range = r.string(checks[i], where, "range");
      info.bound = r.integer(checks[i], where, "bound");
      if (info.bound <= 0)
        r.fail(where, "bound must be positive");
      m.indexChecks.push_back(std::move(info));
    }
  }
  return m;
}

} // namespace

int64_t Manifest::findFragment(const std::string &name) const {
  for (size_t i = 0; i < fragments.size(); ++i)
    if (fragments[i].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

int64_t Manifest::findParameter(const std::string &name) const {
  for (size_t i = 0; i < parameters.size(); ++i)
    if (parameters[i].name == name)
      return static_cast<int64_t>(i);
  return -1;
}

int64_t Manifest::findInput(int64_t index) const {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].index == index)
      return static_cast<int64_t>(i);
  return -1;
}

std::optional<Manifest> tandem::runtime::parseManifest(const std::string &text,
                                                       const std::string &what,
                                                       std::string &error) {
  json root = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) {
    error = what + ": not valid JSON";
    return std::nullopt;
  }
  try {
    Manifest m = parse(root, Reader(what));
    m.path = what;
    size_t slash = what.find_last_of('/');
    m.directory = slash == std::string::npos ? "." : what.substr(0, slash);
    return m;
  } catch (const ManifestError &e) {
    error = e.what();
  } catch (const json::exception &e) {
    error = what + ": " + e.what();
  }
  return std::nullopt;
}

std::optional<Manifest> tandem::runtime::readManifest(const std::string &path,
                                                      std::string &error) {
  std::optional<std::vector<uint8_t>> bytes =
      tandem::io::readBytes(path, error);
  if (!bytes)
    return std::nullopt;
  return parseManifest(std::string(bytes->begin(), bytes->end()), path, error);
}

std::string tandem::runtime::slotText(const SlotRef &slot) {
  std::string text = slot.fragment + "[" + std::to_string(slot.result) + "]";
  if (slot.microbatch >= 0)
    text += " microbatch " + std::to_string(slot.microbatch);
  return text;
}
