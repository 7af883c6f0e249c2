//===- Manifest.cpp - per-rank manifests (tandem-rank-v1) -----------------===//

#include "tandem/Runtime/Manifest.h"
#include "tandem/Runtime/FileIO.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <initializer_list>
#include <map>
#include <stdexcept>
#include <tuple>

using namespace tandem::runtime;
using json = nlohmann::json;

const char *tandem::runtime::elementTypeName(ElementType type) {
  switch (type) {
  case ElementType::F32:
    return "f32";
  case ElementType::F64:
    return "f64";
  case ElementType::I32:
    return "i32";
  case ElementType::I64:
    return "i64";
  case ElementType::BF16:
    return "bf16";
  case ElementType::F16:
    return "f16";
  }
  return "?";
}

size_t tandem::runtime::elementTypeSize(ElementType type) {
  switch (type) {
  case ElementType::F64:
  case ElementType::I64:
    return 8;
  case ElementType::F32:
  case ElementType::I32:
    return 4;
  case ElementType::BF16:
  case ElementType::F16:
    return 2;
  }
  return 0;
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

  /// Field `key`, a string naming one of `names`; anything else is
  /// "unknown <what> '<text>'".
  template <typename E>
  E choice(const json &object, const std::string &where, const char *key,
           std::initializer_list<std::pair<const char *, E>> names,
           const char *what) const {
    std::string name = string(object, where, key);
    for (const auto &[text, value] : names)
      if (name == text)
        return value;
    fail(where, std::string("unknown ") + what + " '" + name + "'");
  }

  ElementType dtype(const json &object, const std::string &where,
                    const char *key) const {
    return choice<ElementType>(object, where, key,
                               {{"f32", ElementType::F32},
                                {"f64", ElementType::F64},
                                {"i32", ElementType::I32},
                                {"i64", ElementType::I64},
                                {"bf16", ElementType::BF16},
                                {"f16", ElementType::F16}},
                               "element type");
  }

  /// Checks `bytes` against the shape and type.
  uint64_t bytes(const json &object, const std::string &where,
                 const std::vector<int64_t> &shape, ElementType type,
                 const char *key = "bytes") const {
    int64_t value = integer(object, where, key);
    uint64_t expected = elementTypeSize(type);
    for (int64_t dim : shape)
      expected *= static_cast<uint64_t>(dim);
    if (value < 0 || static_cast<uint64_t>(value) != expected)
      fail(where, std::string("field '") + key + "' is " +
                      std::to_string(value) + ", the shape and type need " +
                      std::to_string(expected));
    return expected;
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

std::string bufferText(const PlanBufferInfo &buffer) {
  switch (buffer.kind) {
  case PlanBufferKind::Slot:
    return "slot " + slotText(buffer.slot);
  case PlanBufferKind::Accumulator:
    return "accumulator of argument " + std::to_string(buffer.argument) +
           " of actions[" + std::to_string(buffer.action) + "]";
  case PlanBufferKind::Scratch:
    return "scratch of actions[" + std::to_string(buffer.action) + "]";
  }
  return "?";
}

/// Reads the "memory" object and checks it against the action list: a
/// corrupt plan must be an error here, never memory corruption in a step.
/// The liveness walk is this reader's own (the compiler's planner is not
/// linked into the runtime), so the two implementations check each other.
void parseMemory(const json &root, const Reader &r, Manifest &m) {
  const json &memory = r.field(root, "", "memory");
  MemoryPlanInfo &plan = m.memory;
  int64_t alignment = r.integer(memory, "memory", "alignment");
  if (alignment < 64 || (alignment & (alignment - 1)) != 0)
    r.fail("memory", "alignment " + std::to_string(alignment) +
                         " is not a power of two of at least 64 (the ABI "
                         "needs 64-byte aligned buffers)");
  plan.alignment = static_cast<uint64_t>(alignment);
  int64_t arena = r.integer(memory, "memory", "arena_bytes");
  int64_t naive = r.integer(memory, "memory", "naive_bytes");
  if (arena < 0 || naive < 0)
    r.fail("memory", "negative arena_bytes or naive_bytes");
  plan.arenaBytes = static_cast<uint64_t>(arena);
  plan.naiveBytes = static_cast<uint64_t>(naive);

  const int64_t end = static_cast<int64_t>(m.actions.size());
  std::map<std::tuple<std::string, int64_t, int64_t>, size_t> slots;
  std::map<std::pair<int64_t, int64_t>, size_t> accumulators;
  std::map<int64_t, size_t> scratches;
  const json &buffers = r.array(memory, "memory", "buffers");
  for (size_t i = 0; i < buffers.size(); ++i) {
    std::string where = "memory: " + at("buffers", i);
    const json &b = buffers[i];
    PlanBufferInfo info;
    std::string kind = r.string(b, where, "kind");
    bool inserted = true;
    if (kind == "slot") {
      info.kind = PlanBufferKind::Slot;
      info.slot.fragment = r.string(b, where, "fragment");
      info.slot.result = r.integer(b, where, "result");
      if (b.contains("microbatch"))
        info.slot.microbatch = r.integer(b, where, "microbatch");
      inserted = slots
                     .insert({{info.slot.fragment, info.slot.result,
                               info.slot.microbatch},
                              i})
                     .second;
    } else if (kind == "accumulator" || kind == "scratch") {
      info.kind = kind == "scratch" ? PlanBufferKind::Scratch
                                    : PlanBufferKind::Accumulator;
      info.action = r.integer(b, where, "action");
      if (info.action < 0 || info.action >= end ||
          m.actions[info.action].op != ActionKind::Run)
        r.fail(where, "field 'action' names no run");
      if (kind == "scratch") {
        inserted = scratches.insert({info.action, i}).second;
      } else {
        info.argument = r.integer(b, where, "argument");
        inserted =
            accumulators.insert({{info.action, info.argument}, i}).second;
      }
    } else {
      r.fail(where, "unknown buffer kind '" + kind + "'");
    }
    if (!inserted)
      r.fail(where, "a second buffer for the " + bufferText(info));
    int64_t offset = r.integer(b, where, "offset");
    int64_t bytes = r.integer(b, where, "bytes");
    info.first = r.integer(b, where, "first");
    info.last = r.integer(b, where, "last");
    if (offset < 0 || bytes < 0)
      r.fail(where, "negative offset or bytes");
    info.offset = static_cast<uint64_t>(offset);
    info.bytes = static_cast<uint64_t>(bytes);
    if (info.offset % plan.alignment != 0)
      r.fail(where, "offset " + std::to_string(offset) + " is not " +
                        std::to_string(alignment) + "-byte aligned");
    if (info.bytes > plan.arenaBytes ||
        info.offset > plan.arenaBytes - info.bytes)
      r.fail(where, "bytes [" + std::to_string(offset) + ", " +
                        std::to_string(info.offset + info.bytes) +
                        ") do not fit the arena of " + std::to_string(arena) +
                        " bytes");
    if (info.first < 0 || info.first > info.last || info.last > end)
      r.fail(where, "live interval [" + std::to_string(info.first) + ", " +
                        std::to_string(info.last) +
                        "] is not inside the action list [0, " +
                        std::to_string(end) + "]");
    plan.buffers.push_back(std::move(info));
  }

  // Every buffer the list touches is planned with the right size and is
  // live whenever it is touched. Sends read until, and receives write from,
  // the ends of their group (consecutive sends and receives posted
  // together); update/output results are read at the end of the step;
  // summed slots are read as they appear.
  std::vector<char> touched(plan.buffers.size(), 0);
  auto touch = [&](size_t index, uint64_t bytes, bool atLeast, int64_t from,
                   int64_t to, size_t action) {
    PlanBufferInfo &buffer = plan.buffers[index];
    buffer.usedFirst = touched[index] ? std::min(buffer.usedFirst, from) : from;
    buffer.usedLast = touched[index] ? std::max(buffer.usedLast, to) : to;
    std::string where = "memory: " + at("buffers", index);
    if (atLeast ? buffer.bytes < bytes : buffer.bytes != bytes)
      r.fail(where, "the " + bufferText(buffer) + " has " +
                        std::to_string(buffer.bytes) + " bytes, " +
                        at("actions", action) + " needs " +
                        std::to_string(bytes));
    if (from < buffer.first || to > buffer.last)
      r.fail(where, "the " + bufferText(buffer) + " is live over actions [" +
                        std::to_string(buffer.first) + ", " +
                        std::to_string(buffer.last) + "], but " +
                        at("actions", action) + " uses it over [" +
                        std::to_string(from) + ", " + std::to_string(to) + "]");
    touched[index] = 1;
  };
  auto missing = [&](const std::string &what, size_t action) {
    r.fail("memory",
           "no buffer for the " + what + " (" + at("actions", action) + ")");
  };
  // Per slot buffer: the action after which its value is there (its run,
  // or the last action of its receive's group).
  std::map<int64_t, int64_t> ready;
  auto slotIndex = [&](const SlotRef &slot) -> int64_t {
    auto it = slots.find({slot.fragment, slot.result, slot.microbatch});
    return it == slots.end() ? -1 : static_cast<int64_t>(it->second);
  };
  for (int64_t i = 0; i < end;) {
    const ActionInfo &action = m.actions[i];
    if (action.op == ActionKind::Run) {
      const FragmentInfo &f = m.fragments[m.findFragment(action.fragment)];
      for (size_t a = 0; a < f.arguments.size(); ++a) {
        const ArgumentInfo &arg = f.arguments[a];
        if (arg.kind != BindingKind::Slot)
          continue;
        // A slot nobody defines is reported by the step ("not held").
        if (arg.rule != SlotRule::SumMicrobatches) {
          SlotRef slot = arg.slot;
          slot.microbatch =
              arg.rule == SlotRule::SameMicrobatch ? action.microbatch : -1;
          int64_t index = slotIndex(slot);
          if (index >= 0)
            touch(index, arg.bytes, false, i, i, i);
          continue;
        }
        // Summed as the slots appear, in microbatch order: slot k is added
        // right after the action at which both it and the sum of slots
        // 0..k-1 are there (RankProgram::runStep), so it lives until then
        // and the sum from slot 0's action to the run.
        auto it = accumulators.find({i, static_cast<int64_t>(a)});
        if (it == accumulators.end())
          missing("sum of argument " + std::to_string(a) + " of " + f.name, i);
        int64_t fold = -1, sumFirst = i;
        for (int64_t k = 0; k < m.grid.microbatches; ++k) {
          SlotRef slot = arg.slot;
          slot.microbatch = k;
          int64_t index = slotIndex(slot);
          if (index < 0)
            continue;
          auto at = ready.find(index);
          fold = std::max(fold, at == ready.end() ? i : at->second);
          if (k == 0)
            sumFirst = fold;
          touch(index, arg.bytes, false, fold, fold, i);
        }
        touch(it->second, arg.bytes, false, sumFirst, i, i);
      }
      if (f.scratchBytes) {
        auto it = scratches.find(i);
        if (it == scratches.end())
          missing("scratch of " + f.name, i);
        touch(it->second, f.scratchBytes, true, i, i, i);
      } else if (scratches.count(i)) {
        // More scratch than needed is harmless.
        PlanBufferInfo &extra = plan.buffers[scratches[i]];
        extra.usedFirst = extra.usedLast = i;
        touched[scratches[i]] = 1;
      }
      for (size_t k = 0; k < f.results.size(); ++k) {
        if (f.results[k].inPlaceOf)
          continue; // Written over its parameter: no slot buffer.
        SlotRef slot{f.name, static_cast<int64_t>(k), action.microbatch};
        int64_t index = slotIndex(slot);
        if (index < 0)
          missing("result slot " + slotText(slot), i);
        const ResultInfo &res = f.results[k];
        touch(index, res.bytes, false, i, res.update || res.output ? end : i,
              i);
        ready[index] = i;
      }
      ++i;
      continue;
    }
    int64_t last = i;
    while (last + 1 < end && m.actions[last + 1].op != ActionKind::Run)
      ++last;
    for (int64_t k = i; k <= last; ++k) {
      const ActionInfo &a = m.actions[k];
      int64_t index = slotIndex(a.slot);
      if (a.op == ActionKind::Recv) {
        if (index < 0)
          missing("received slot " + slotText(a.slot), k);
        touch(index, a.bytes, false, i, last, k);
        ready[index] = last;
      } else if (index >= 0) {
        touch(index, a.bytes, false, k, last, k);
      }
    }
    i = last + 1;
  }
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (!touched[i])
      r.fail("memory: " + at("buffers", i),
             "the " + bufferText(plan.buffers[i]) + " is used by no action");

  // Buffers live together never share a byte: a sweep in offset order, where
  // only buffers starting inside another's bytes can collide with it.
  std::vector<size_t> order;
  for (size_t i = 0; i < plan.buffers.size(); ++i)
    if (plan.buffers[i].bytes)
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return plan.buffers[a].offset < plan.buffers[b].offset;
  });
  for (size_t i = 0; i < order.size(); ++i) {
    const PlanBufferInfo &a = plan.buffers[order[i]];
    for (size_t j = i + 1;
         j < order.size() && plan.buffers[order[j]].offset < a.offset + a.bytes;
         ++j) {
      const PlanBufferInfo &b = plan.buffers[order[j]];
      if (a.first <= b.last && b.first <= a.last) {
        size_t lo = std::min(order[i], order[j]);
        size_t hi = std::max(order[i], order[j]);
        r.fail("memory", at("buffers", lo) + " (" +
                             bufferText(plan.buffers[lo]) + ") and " +
                             at("buffers", hi) + " (" +
                             bufferText(plan.buffers[hi]) +
                             ") are live together but share bytes");
      }
    }
  }
}

Manifest parse(const json &root, const Reader &r) {
  Manifest m;
  std::string format = r.string(root, "", "format");
  if (format != "tandem-rank-v1")
    r.fail("", "unsupported manifest format '" + format +
                   "' (this runtime reads tandem-rank-v1)");
  m.program = r.string(root, "", "program");
  m.library = r.string(root, "", "library");
  m.source = r.string(root, "", "source");

  const json &grid = r.field(root, "", "grid");
  m.grid.stages = r.integer(grid, "grid", "stages");
  m.grid.chunks = r.integer(grid, "grid", "chunks");
  m.grid.replicas = r.integer(grid, "grid", "replicas");
  m.grid.microbatches = r.integer(grid, "grid", "microbatches");
  m.grid.rank = r.integer(grid, "grid", "rank");
  m.grid.stage = r.integer(grid, "grid", "stage");
  m.grid.replica = r.integer(grid, "grid", "replica");
  if (m.grid.stages < 1 || m.grid.replicas < 1 || m.grid.microbatches < 1 ||
      m.grid.rank < 0 || m.grid.rank >= m.grid.stages * m.grid.replicas)
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
    info.init.kind = r.choice<tandem::rng::InitKind>(
        init, where + ": init", "kind",
        {{"zeros", tandem::rng::InitKind::Zeros},
         {"ones", tandem::rng::InitKind::Ones},
         {"normal", tandem::rng::InitKind::Normal},
         {"uniform", tandem::rng::InitKind::Uniform}},
        "init kind");
    info.init.a = r.number(init, where + ": init", "a");
    info.init.b = r.number(init, where + ": init", "b");
    info.updated = r.boolean(p, where, "updated");
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
    info.role = r.choice<InputRole>(in, where, "role",
                                    {{"tokens", InputRole::Tokens},
                                     {"targets", InputRole::Targets},
                                     {"other", InputRole::Other},
                                     {"ambiguous", InputRole::Ambiguous}},
                                    "role");
    if (in.contains("vocabulary")) {
      info.vocabulary = r.integer(in, where, "vocabulary");
      if (*info.vocabulary <= 0)
        r.fail(where, "vocabulary must be positive");
    }
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
    int64_t scratch = r.integer(f, where, "scratch_bytes");
    if (scratch < 0)
      r.fail(where, "negative scratch_bytes");
    info.scratchBytes = static_cast<uint64_t>(scratch);
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
        ai.rule = r.choice<SlotRule>(
            arg, aw, "rule",
            {{"same_microbatch", SlotRule::SameMicrobatch},
             {"step_value", SlotRule::StepValue},
             {"sum_microbatches", SlotRule::SumMicrobatches}},
            "rule");
        ai.local = r.boolean(arg, aw, "local");
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
    std::string op = r.string(a, where, "op");
    if (op == "run") {
      info.op = ActionKind::Run;
      info.fragment = r.string(a, where, "fragment");
      if (a.contains("microbatch"))
        info.microbatch = r.integer(a, where, "microbatch");
    } else if (op == "send" || op == "recv") {
      info.op = op == "send" ? ActionKind::Send : ActionKind::Recv;
      info.slot = r.slot(a, where, /*withMicrobatch=*/true);
      info.peer = r.integer(a, where, "peer");
      info.channel = r.integer(a, where, "channel");
      info.sequence = r.integer(a, where, "sequence");
      info.dtype = r.dtype(a, where, "dtype");
      info.shape = r.shape(a, where, "shape");
      info.bytes = r.bytes(a, where, info.shape, info.dtype);
      info.wire = r.dtype(a, where, "wire");
    } else {
      r.fail(where, "action '" + op + "' is not supported by the runtime yet");
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
    if (a.op != ActionKind::Run &&
        (a.peer < 0 || a.peer >= m.grid.stages * m.grid.replicas))
      r.fail(at("actions", i), "peer outside the grid");
  }
  parseMemory(root, r, m);
  if (root.contains("predicted_memory")) {
    const json &p = root["predicted_memory"];
    const char *where = "predicted_memory";
    PredictedMemoryInfo info;
    info.analysis = r.string(p, where, "analysis");
    auto bytes = [&](const char *key) {
      int64_t value = r.integer(p, where, key);
      if (value < 0)
        r.fail(where, std::string("negative '") + key + "'");
      return static_cast<uint64_t>(value);
    };
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
