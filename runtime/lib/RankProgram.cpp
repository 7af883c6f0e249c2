//===- RankProgram.cpp - one rank's library and action list ---------------===//

#include "tandem/Runtime/RankProgram.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <thread>
#include <tuple>

using namespace tandem::runtime;

void Buffer::Free::operator()(void *p) const { std::free(p); }

Buffer::Buffer(uint64_t size) : bytes(size) {
  uint64_t rounded = (size + 63) / 64 * 64;
  if (rounded == 0)
    rounded = 64;
  storage.reset(std::aligned_alloc(64, rounded));
  if (!storage)
    throw std::bad_alloc();
  std::memset(storage.get(), 0, rounded);
}

RankProgram::~RankProgram() {
  if (handle)
    dlclose(handle);
}

std::unique_ptr<RankProgram> RankProgram::load(const std::string &path,
                                               std::string &error) {
  std::optional<Manifest> manifest = readManifest(path, error);
  if (!manifest)
    return nullptr;
  std::unique_ptr<RankProgram> program(new RankProgram());
  program->info = std::move(*manifest);
  const Manifest &m = program->info;

  for (const FragmentInfo &f : m.fragments)
    for (const ResultInfo &r : f.results)
      if (r.update && m.findParameter(*r.update) < 0) {
        error = m.path + ": fragment '" + f.name + "' updates unknown " +
                "parameter '" + *r.update + "'";
        return nullptr;
      }
  for (const ActionInfo &a : m.actions)
    if (a.op != ActionKind::Run && a.wire != a.dtype) {
      error = m.path + ": a " + (a.op == ActionKind::Send ? "send" : "recv") +
              " of " + a.slot.fragment + " with wire type " +
              elementTypeName(a.wire) + " for " + elementTypeName(a.dtype) +
              ": wire conversion is not supported by the runtime yet";
      return nullptr;
    }

  std::string library = m.library;
  if (library.empty() || library[0] != '/')
    library = m.directory + "/" + library;
  program->handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!program->handle) {
    const char *message = dlerror();
    error = m.path + ": cannot load library '" + library +
            "': " + (message ? message : "unknown error");
    return nullptr;
  }
  for (const FragmentInfo &f : m.fragments) {
    void *fn = dlsym(program->handle, f.symbol.c_str());
    void *scratch = dlsym(program->handle, f.scratchSymbol.c_str());
    const std::string &missing = !fn ? f.symbol : f.scratchSymbol;
    if (!fn || !scratch) {
      error = m.path + ": library '" + library + "' has no symbol '" + missing +
              "' (fragment '" + f.name + "')";
      return nullptr;
    }
    program->functions.push_back(reinterpret_cast<Fn>(fn));
    uint64_t bytes = reinterpret_cast<ScratchFn>(scratch)();
    if (bytes > program->scratchBytes)
      program->scratchBytes = bytes;
  }
  return program;
}

bool RankProgram::initParameters(uint64_t seed, std::string &error) {
  std::map<std::string, Buffer> values;
  for (const ParameterInfo &p : info.parameters) {
    Buffer buffer(p.bytes);
    uint64_t stream = rng::parameterStream(p.name);
    size_t count = p.bytes / elementTypeSize(p.dtype);
    if (p.dtype == ElementType::F32)
      rng::initFill(p.init, seed, stream, 0,
                    static_cast<float *>(buffer.data()), count);
    else if (p.dtype == ElementType::F64)
      rng::initFill(p.init, seed, stream, 0,
                    static_cast<double *>(buffer.data()), count);
    else {
      error = info.path + ": parameter '" + p.name + "' has type " +
              elementTypeName(p.dtype) +
              "; initialization supports f32 and f64";
      return false;
    }
    values[p.name] = std::move(buffer);
  }
  parameters = std::move(values);
  return true;
}

bool RankProgram::setParameter(const std::string &name, const void *data,
                               uint64_t bytes, std::string &error) {
  int64_t index = info.findParameter(name);
  if (index < 0) {
    error = info.path + ": no parameter '" + name + "'";
    return false;
  }
  if (info.parameters[index].bytes != bytes) {
    error = info.path + ": parameter '" + name + "' has " +
            std::to_string(info.parameters[index].bytes) + " bytes, not " +
            std::to_string(bytes);
    return false;
  }
  Buffer buffer(bytes);
  std::memcpy(buffer.data(), data, bytes);
  parameters[name] = std::move(buffer);
  return true;
}

const Buffer *RankProgram::parameter(const std::string &name) const {
  auto it = parameters.find(name);
  return it == parameters.end() ? nullptr : &it->second;
}

namespace {

using SlotKey = std::tuple<std::string, int64_t, int64_t>;

std::string describe(const std::string &fragment, int64_t result,
                     int64_t microbatch) {
  std::string text = fragment + "[" + std::to_string(result) + "]";
  if (microbatch >= 0)
    text += " microbatch " + std::to_string(microbatch);
  return text;
}

template <typename T>
void accumulate(void *acc, const void *value, uint64_t bytes) {
  T *a = static_cast<T *>(acc);
  const T *v = static_cast<const T *>(value);
  for (uint64_t i = 0, e = bytes / sizeof(T); i < e; ++i)
    a[i] = a[i] + v[i];
}

} // namespace

bool RankProgram::runStep(const std::map<int64_t, const Buffer *> &inputs,
                          Transport &transport, StepResult &result,
                          std::string &error) {
  const Manifest &m = info;
  const int64_t rank = m.grid.rank;
  const int64_t microbatches = m.grid.microbatches;
  std::string prefix = "rank " + std::to_string(rank) + ": ";
  auto fail = [&](const std::string &message) {
    error = prefix + message;
    transport.abort(error);
    return false;
  };
  if (parameters.size() != m.parameters.size())
    return fail("parameters are not initialized");
  for (const InputInfo &in : m.inputs) {
    auto it = inputs.find(in.index);
    if (it == inputs.end() || !it->second)
      return fail("step input " + std::to_string(in.index) + " is missing");
    if (it->second->size() != in.microbatchBytes * microbatches)
      return fail("step input " + std::to_string(in.index) + " has " +
                  std::to_string(it->second->size()) + " bytes, not " +
                  std::to_string(in.microbatchBytes * microbatches));
  }

  std::map<SlotKey, std::shared_ptr<Buffer>> slots;
  Buffer scratch(scratchBytes);
  auto findSlot = [&](const std::string &fragment, int64_t r,
                      int64_t mb) -> std::shared_ptr<Buffer> {
    auto it = slots.find(SlotKey{fragment, r, mb});
    return it == slots.end() ? nullptr : it->second;
  };

  size_t pc = 0;
  while (pc < m.actions.size()) {
    const ActionInfo &action = m.actions[pc];
    if (action.op == ActionKind::Run) {
      ++pc;
      int64_t fi = m.findFragment(action.fragment);
      const FragmentInfo &f = m.fragments[fi];
      int64_t mb = action.microbatch;
      std::string where =
          "run " + f.name +
          (mb >= 0 ? " microbatch " + std::to_string(mb) : std::string());
      if (f.perMicrobatch != (mb >= 0) || mb >= microbatches)
        return fail(where + ": microbatch does not fit the fragment");
      std::vector<const void *> args;
      std::vector<std::shared_ptr<Buffer>> keep;
      for (size_t a = 0; a < f.arguments.size(); ++a) {
        const ArgumentInfo &arg = f.arguments[a];
        switch (arg.kind) {
        case BindingKind::Param:
          args.push_back(parameters.at(arg.param).data());
          break;
        case BindingKind::Input: {
          if (mb < 0)
            return fail(where + ": a once-per-step fragment cannot bind a "
                                "step input");
          const Buffer *full = inputs.at(arg.input);
          args.push_back(static_cast<const uint8_t *>(full->data()) +
                         arg.bytes * mb);
          break;
        }
        case BindingKind::Slot: {
          if (arg.rule == SlotRule::SumMicrobatches) {
            if (arg.dtype != ElementType::F32 && arg.dtype != ElementType::F64)
              return fail(where + ": accumulating " +
                          elementTypeName(arg.dtype) + " is not supported");
            auto acc = std::make_shared<Buffer>(arg.bytes);
            for (int64_t k = 0; k < microbatches; ++k) {
              std::shared_ptr<Buffer> s =
                  findSlot(arg.slot.fragment, arg.slot.result, k);
              if (!s)
                return fail(where + ": argument " + std::to_string(a) +
                            ": slot " +
                            describe(arg.slot.fragment, arg.slot.result, k) +
                            " is not held");
              if (s->size() != arg.bytes)
                return fail(where + ": slot size mismatch");
              if (k == 0)
                std::memcpy(acc->data(), s->data(), arg.bytes);
              else if (arg.dtype == ElementType::F32)
                accumulate<float>(acc->data(), s->data(), arg.bytes);
              else
                accumulate<double>(acc->data(), s->data(), arg.bytes);
            }
            keep.push_back(acc);
            args.push_back(acc->data());
            break;
          }
          int64_t slotMb = arg.rule == SlotRule::SameMicrobatch ? mb : -1;
          std::shared_ptr<Buffer> s =
              findSlot(arg.slot.fragment, arg.slot.result, slotMb);
          if (!s)
            return fail(where + ": argument " + std::to_string(a) + ": slot " +
                        describe(arg.slot.fragment, arg.slot.result, slotMb) +
                        " is not held");
          if (s->size() != arg.bytes)
            return fail(where + ": slot size mismatch");
          args.push_back(s->data());
          break;
        }
        }
      }
      std::vector<void *> results;
      std::vector<std::shared_ptr<Buffer>> produced;
      for (const ResultInfo &r : f.results) {
        produced.push_back(std::make_shared<Buffer>(r.bytes));
        results.push_back(produced.back()->data());
      }
      int status = functions[fi](args.data(), results.data(), scratch.data());
      if (status != 0)
        return fail(where + ": the fragment returned " +
                    std::to_string(status) + " (an index out of range)");
      for (size_t r = 0; r < produced.size(); ++r)
        slots[SlotKey{f.name, static_cast<int64_t>(r), mb}] = produced[r];
      continue;
    }

    // A group: the maximal run of consecutive sends and receives.
    std::vector<TransportOp> group;
    std::vector<std::pair<SlotKey, std::shared_ptr<Buffer>>> received;
    std::vector<std::shared_ptr<Buffer>> sent;
    for (; pc < m.actions.size() && m.actions[pc].op != ActionKind::Run; ++pc) {
      const ActionInfo &a = m.actions[pc];
      TransportOp op;
      op.send = a.op == ActionKind::Send;
      op.peer = a.peer;
      op.channel = a.channel;
      op.dtype = a.dtype;
      op.wire = a.wire;
      op.bytes = a.bytes;
      op.description =
          std::string(op.send ? "send of " : "recv of ") +
          describe(a.slot.fragment, a.slot.result, a.slot.microbatch);
      if (op.send) {
        std::shared_ptr<Buffer> s =
            findSlot(a.slot.fragment, a.slot.result, a.slot.microbatch);
        if (!s)
          return fail(op.description + ": the slot is not held");
        if (s->size() != a.bytes)
          return fail(op.description + ": slot size mismatch");
        op.sendData = s->data();
        sent.push_back(s);
      } else {
        auto buffer = std::make_shared<Buffer>(a.bytes);
        op.recvData = buffer->data();
        received.push_back(
            {SlotKey{a.slot.fragment, a.slot.result, a.slot.microbatch},
             buffer});
      }
      group.push_back(std::move(op));
    }
    std::string transportError;
    if (!transport.exchange(rank, group, transportError)) {
      error = transportError.rfind("rank ", 0) == 0 ||
                      transportError.rfind("deadlock", 0) == 0
                  ? transportError
                  : prefix + transportError;
      transport.abort(error);
      return false;
    }
    for (auto &[key, buffer] : received)
      slots[key] = buffer;
  }

  StepResult step;
  for (const FragmentInfo &f : m.fragments)
    for (size_t r = 0; r < f.results.size(); ++r) {
      const ResultInfo &res = f.results[r];
      if (!res.update && !res.output)
        continue;
      std::shared_ptr<Buffer> value =
          findSlot(f.name, static_cast<int64_t>(r), -1);
      if (!value)
        return fail("result " + describe(f.name, static_cast<int64_t>(r), -1) +
                    " was not produced");
      if (res.update)
        step.updates[*res.update] = value;
      if (res.output)
        step.outputs[*res.output] = value;
    }
  transport.finish(rank);
  result = std::move(step);
  return true;
}

void RankProgram::applyUpdates(const StepResult &result) {
  for (const auto &[name, value] : result.updates) {
    Buffer buffer(value->size());
    std::memcpy(buffer.data(), value->data(), value->size());
    parameters[name] = std::move(buffer);
  }
}

bool tandem::runtime::loadRanks(
    const std::string &directory,
    std::vector<std::unique_ptr<RankProgram>> &ranks, std::string &error) {
  ranks.clear();
  auto first = RankProgram::load(directory + "/rank0.json", error);
  if (!first)
    return false;
  const GridInfo grid = first->manifest().grid;
  int64_t count = grid.stages * grid.replicas;
  ranks.push_back(std::move(first));
  for (int64_t r = 1; r < count; ++r) {
    auto program = RankProgram::load(
        directory + "/rank" + std::to_string(r) + ".json", error);
    if (!program)
      return false;
    ranks.push_back(std::move(program));
  }
  for (int64_t r = 0; r < count; ++r) {
    const Manifest &m = ranks[r]->manifest();
    if (m.grid.rank != r || m.grid.stages != grid.stages ||
        m.grid.replicas != grid.replicas ||
        m.grid.microbatches != grid.microbatches ||
        m.program != ranks[0]->manifest().program) {
      error = m.path + ": its grid or program differs from rank 0's";
      return false;
    }
  }
  return true;
}

bool tandem::runtime::runStepInProcess(
    std::vector<std::unique_ptr<RankProgram>> &ranks,
    const std::map<int64_t, const Buffer *> &inputs,
    std::map<int64_t, std::shared_ptr<Buffer>> &outputs, std::string &error) {
  InProcessTransport transport(static_cast<int64_t>(ranks.size()));
  std::vector<StepResult> results(ranks.size());
  std::vector<std::string> errors(ranks.size());
  std::vector<char> ok(ranks.size(), 0);
  std::vector<std::thread> threads;
  for (size_t r = 0; r < ranks.size(); ++r)
    threads.emplace_back([&, r] {
      ok[r] = ranks[r]->runStep(inputs, transport, results[r], errors[r]);
    });
  for (std::thread &t : threads)
    t.join();
  // The first error: a root cause rather than the abort it caused.
  std::string first;
  for (size_t r = 0; r < ranks.size(); ++r)
    if (!ok[r] && first.empty())
      first = errors[r];
  if (!first.empty()) {
    error = first;
    return false;
  }
  std::map<int64_t, std::shared_ptr<Buffer>> all;
  for (size_t r = 0; r < ranks.size(); ++r)
    for (auto &[index, value] : results[r].outputs) {
      if (all.count(index)) {
        error = "step output " + std::to_string(index) +
                " is produced by more than one rank";
        return false;
      }
      all[index] = value;
    }
  for (size_t r = 0; r < ranks.size(); ++r)
    ranks[r]->applyUpdates(results[r]);
  outputs = std::move(all);
  return true;
}
