//===- PipelineExecutor.cpp - every rank of a step on its own thread ------===//
//
// Each rank walks its action list with its own slot table: runs evaluate a
// fragment through the interpreter, maximal runs of sends and receives are
// posted as one group, collectives go to the transport. The IR is only
// read while the threads run. The first error stops every rank (the
// transport wakes the waiting ones); the step then returns it.
//
//===----------------------------------------------------------------------===//

#include "tandem/Eval/Pipeline.h"

#include "PipelinePlan.h"

#include "tandem/Eval/Kernels.h"
#include "tandem/Eval/Rounding.h"

#include "llvm/Support/raw_ostream.h"

#include <map>
#include <mutex>
#include <thread>
#include <tuple>

using namespace tandem::eval;
using namespace mlir;
namespace mpmd = tandem::mpmd;

namespace {

using SlotKey = std::tuple<llvm::StringRef, int64_t, int64_t>;
using SlotTable = std::map<SlotKey, Tensor>;

/// "tensor<4x8xf32>" without creating a type (the IR's context is shared by
/// every rank thread).
std::string tensorText(llvm::ArrayRef<int64_t> shape, Type elementType) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "tensor<";
  for (int64_t size : shape)
    os << size << "x";
  os << elementType << ">";
  return text;
}

std::string tensorText(const Tensor &tensor) {
  return tensorText(tensor.shape, tensor.elementType);
}

std::string tensorText(RankedTensorType type) {
  return tensorText(type.getShape(), type.getElementType());
}

bool hasType(const Tensor &tensor, RankedTensorType type) {
  return tensor.elementType == type.getElementType() &&
         llvm::ArrayRef<int64_t>(tensor.shape) == type.getShape() &&
         int64_t(tensor.data.size()) == type.getNumElements();
}

/// The first error of a step; what other ranks report after it (that they
/// were stopped) is dropped.
class FirstError {
public:
  void set(const std::string &message) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!first)
      first = message;
  }
  std::optional<std::string> get() const { return first; }

private:
  std::mutex mutex;
  std::optional<std::string> first;
};

/// What every rank thread shares; all of it is read-only during the step.
struct StepContext {
  const PipelinePlan &plan;
  Interpreter &interpreter;
  RoundingOptions rounding;
  /// slices[j][k]: microbatch k of step input j.
  std::vector<std::vector<Tensor>> slices;
  Transport &transport;
};

class RankRunner {
public:
  RankRunner(StepContext &context, int64_t rank, SlotTable &slots)
      : context(context), plan(context.plan.ranks[rank]), rank(rank),
        slots(slots) {}

  llvm::Error run();
  /// Whether run() stopped because another rank failed first.
  bool stoppedByAbort() const { return stopped; }

private:
  llvm::Error runFragment(mpmd::RunOp op);
  llvm::Error exchange(llvm::ArrayRef<Operation *> ops);
  llvm::Error allReduce(mpmd::AllReduceOp op);
  llvm::Error broadcast(mpmd::BroadcastOp op);

  /// The slot this rank holds, or an error on `op` saying what needs it.
  llvm::Expected<const Tensor *> held(Operation *op, llvm::StringRef fragment,
                                      int64_t result, int64_t microbatch,
                                      const llvm::Twine &purpose);
  /// The value of argument `index` of `fragment` for `microbatch`.
  llvm::Expected<Tensor> bind(mpmd::RunOp op, const FragmentPlan &fragment,
                              unsigned index, int64_t microbatch);

  StepContext &context;
  const RankPlan &plan;
  int64_t rank;
  SlotTable &slots;
  bool stopped = false;
};

} // namespace

static int64_t microbatchOf(std::optional<uint64_t> microbatch) {
  return microbatch ? int64_t(*microbatch) : kStepSlot;
}

llvm::Expected<const Tensor *>
RankRunner::held(Operation *op, llvm::StringRef fragment, int64_t result,
                 int64_t microbatch, const llvm::Twine &purpose) {
  auto it = slots.find({fragment, result, microbatch});
  if (it == slots.end())
    return opError(op, purpose + " needs slot " +
                           slotName(fragment, result, microbatch) +
                           ", which rank " + llvm::Twine(rank) +
                           " does not hold at this point");
  return &it->second;
}

llvm::Expected<Tensor> RankRunner::bind(mpmd::RunOp op,
                                        const FragmentPlan &fragment,
                                        unsigned index, int64_t microbatch) {
  const ArgumentSource &source = fragment.arguments[index];
  // Op handles are values; copies are non-const.
  mpmd::FragmentOp fragmentOp = fragment.op;
  std::string purpose = "argument " + std::to_string(index) + " of @" +
                        fragmentOp.getSymName().str();
  Tensor value;
  switch (source.kind) {
  case ArgumentSource::Kind::Param: {
    const ParameterMap &parameters = context.interpreter.getParameters();
    auto it = parameters.find(source.param);
    if (it == parameters.end())
      return opError(op, purpose + ": no value for parameter '" + source.param +
                             "'");
    value = it->second;
    break;
  }
  case ArgumentSource::Kind::Input:
    value = context.slices[source.input][microbatch];
    break;
  case ArgumentSource::Kind::Transfer: {
    if (!source.producerPerMicrobatch || fragment.perMicrobatch) {
      int64_t from = source.producerPerMicrobatch ? microbatch : kStepSlot;
      auto slot = held(op, source.producer, source.result, from, purpose);
      if (!slot)
        return slot.takeError();
      value = **slot;
      break;
    }
    // Gradient accumulation: the microbatches' values summed in increasing
    // microbatch order, rounded after every add as nn.add would.
    for (int64_t k = 0; k < context.plan.microbatches; ++k) {
      auto slot = held(op, source.producer, source.result, k, purpose);
      if (!slot)
        return slot.takeError();
      if (!hasType(**slot, source.type))
        return opError(op, purpose + " is " + tensorText(source.type) +
                               ", but slot " +
                               slotName(source.producer, source.result, k) +
                               " holds " + tensorText(**slot));
      if (k == 0)
        value = **slot;
      else
        combineInto(value, **slot, Reduction::Sum, context.rounding);
    }
    break;
  }
  }
  if (!hasType(value, source.type))
    return opError(op, purpose + " is " + tensorText(source.type) +
                           ", but its value is " + tensorText(value));
  return value;
}

llvm::Error RankRunner::runFragment(mpmd::RunOp op) {
  llvm::StringRef name = op.getFragment();
  auto it = plan.fragments.find(name);
  if (it == plan.fragments.end()) {
    if (plan.symbols.count(name))
      return opError(op, "fragment @" + name +
                             " is a declaration of a fragment that runs on "
                             "another rank");
    return opError(op, "no fragment @" + name + " in the program");
  }
  const FragmentPlan &fragment = it->second;
  int64_t microbatch = microbatchOf(op.getMicrobatch());
  if (fragment.perMicrobatch &&
      (microbatch < 0 || microbatch >= context.plan.microbatches))
    return opError(op, "fragment @" + name +
                           " runs per microbatch: expected a microbatch in "
                           "[0, " +
                           llvm::Twine(context.plan.microbatches) + ")");
  if (!fragment.perMicrobatch && microbatch != kStepSlot)
    return opError(op, "fragment @" + name +
                           " runs once per step: expected no microbatch");

  std::vector<Tensor> arguments;
  for (unsigned i = 0; i < fragment.arguments.size(); ++i) {
    auto value = bind(op, fragment, i, microbatch);
    if (!value)
      return value.takeError();
    arguments.push_back(std::move(*value));
  }
  mpmd::FragmentOp fragmentOp = fragment.op;
  auto results = context.interpreter.evaluateBlock(fragmentOp.getBody().front(),
                                                   arguments);
  if (!results)
    return results.takeError();
  for (auto [index, result] : llvm::enumerate(*results))
    slots[{fragmentOp.getSymName(), int64_t(index), microbatch}] =
        std::move(result);
  return llvm::Error::success();
}

llvm::Error RankRunner::exchange(llvm::ArrayRef<Operation *> ops) {
  std::vector<Message> group;
  std::vector<SlotKey> received;
  for (Operation *op : ops) {
    auto send = dyn_cast<mpmd::SendOp>(op);
    auto recv = dyn_cast<mpmd::RecvOp>(op);
    Message message;
    message.kind = send ? Message::Kind::Send : Message::Kind::Recv;
    llvm::StringRef fragment = send ? send.getFragment() : recv.getFragment();
    int64_t result = send ? send.getResult() : recv.getResult();
    int64_t microbatch =
        microbatchOf(send ? send.getMicrobatch() : recv.getMicrobatch());
    message.peer = send ? send.getPeer() : recv.getPeer();
    message.channel = send ? send.getChannel() : recv.getChannel();
    message.type = send ? send.getType() : recv.getType();
    message.wire = send ? send.getWire() : recv.getWire();
    message.slot = slotName(fragment, result, microbatch);
    message.what = std::string(send ? "send" : "recv") + " of " + message.slot +
                   (send ? " to" : " from") + " rank " +
                   std::to_string(message.peer) + " on channel " +
                   std::to_string(message.channel) + " (" +
                   formatLocation(op->getLoc()) + ")";
    if (send) {
      // A send's slot must be held when the group is posted, not merely
      // received within it.
      auto slot = held(op, fragment, result, microbatch, "this send");
      if (!slot)
        return slot.takeError();
      if (!hasType(**slot, message.type))
        return opError(op, "sends " + tensorText(message.type) + ", but slot " +
                               message.slot + " holds " + tensorText(**slot));
      message.payload = **slot;
    } else {
      received.push_back({fragment, result, microbatch});
    }
    group.push_back(std::move(message));
  }

  if (llvm::Error error = context.transport.exchange(rank, group))
    return error;

  auto key = received.begin();
  for (Message &message : group) {
    if (message.kind != Message::Kind::Recv)
      continue;
    Tensor value = std::move(message.payload);
    value.elementType = message.type.getElementType();
    value.shape.assign(message.type.getShape().begin(),
                       message.type.getShape().end());
    slots[*key++] = std::move(value);
  }
  return llvm::Error::success();
}

llvm::Error RankRunner::allReduce(mpmd::AllReduceOp op) {
  int64_t microbatch = microbatchOf(op.getMicrobatch());
  auto slot =
      held(op, op.getFragment(), op.getResult(), microbatch, "this all_reduce");
  if (!slot)
    return slot.takeError();
  Collective collective;
  collective.kind = Collective::Kind::AllReduce;
  collective.reduction = op.getReduction() == mpmd::ReduceKind::Sum
                             ? Reduction::Sum
                             : Reduction::Max;
  collective.group.assign(op.getGroup().begin(), op.getGroup().end());
  collective.type = op.getType();
  collective.rounding = context.rounding;
  std::string slot_ = slotName(op.getFragment(), op.getResult(), microbatch);
  collective.what =
      "all_reduce of " + slot_ + " (" + formatLocation(op.getLoc()) + ")";
  if (!hasType(**slot, collective.type))
    return opError(op, "reduces " + tensorText(collective.type) +
                           ", but slot " + slot_ + " holds " +
                           tensorText(**slot));
  Tensor value = **slot;
  if (llvm::Error error = context.transport.collective(rank, collective, value))
    return error;
  slots[{op.getFragment(), int64_t(op.getResult()), microbatch}] =
      std::move(value);
  return llvm::Error::success();
}

llvm::Error RankRunner::broadcast(mpmd::BroadcastOp op) {
  int64_t microbatch = microbatchOf(op.getMicrobatch());
  Collective collective;
  collective.kind = Collective::Kind::Broadcast;
  collective.group.assign(op.getGroup().begin(), op.getGroup().end());
  collective.root = op.getRoot();
  collective.type = op.getType();
  collective.rounding = context.rounding;
  std::string slot_ = slotName(op.getFragment(), op.getResult(), microbatch);
  collective.what = "broadcast of " + slot_ + " from rank " +
                    std::to_string(collective.root) + " (" +
                    formatLocation(op.getLoc()) + ")";
  Tensor value(collective.type);
  if (collective.root == rank) {
    auto slot = held(op, op.getFragment(), op.getResult(), microbatch,
                     "this broadcast");
    if (!slot)
      return slot.takeError();
    if (!hasType(**slot, collective.type))
      return opError(op, "broadcasts " + tensorText(collective.type) +
                             ", but slot " + slot_ + " holds " +
                             tensorText(**slot));
    value = **slot;
  }
  if (llvm::Error error = context.transport.collective(rank, collective, value))
    return error;
  slots[{op.getFragment(), int64_t(op.getResult()), microbatch}] =
      std::move(value);
  return llvm::Error::success();
}

llvm::Error RankRunner::run() {
  std::vector<Operation *> ops;
  if (mpmd::RankOp list = plan.list)
    for (Operation &op : list.getBodyBlock())
      ops.push_back(&op);
  for (size_t i = 0; i < ops.size();) {
    if (context.transport.isAborted()) {
      stopped = true;
      return llvm::createStringError("stopped: another rank failed");
    }
    Operation *op = ops[i];
    if (isa<mpmd::SendOp, mpmd::RecvOp>(op)) {
      size_t end = i;
      while (end < ops.size() && isa<mpmd::SendOp, mpmd::RecvOp>(ops[end]))
        ++end;
      if (llvm::Error error =
              exchange(llvm::ArrayRef<Operation *>(ops).slice(i, end - i)))
        return error;
      i = end;
      continue;
    }
    llvm::Error error = llvm::Error::success();
    if (auto run = dyn_cast<mpmd::RunOp>(op))
      error = runFragment(run);
    else if (auto reduce = dyn_cast<mpmd::AllReduceOp>(op))
      error = allReduce(reduce);
    else if (auto bcast = dyn_cast<mpmd::BroadcastOp>(op))
      error = broadcast(bcast);
    else
      error = opError(op, "is not an action the pipeline executor runs");
    if (error)
      return error;
    ++i;
  }
  context.transport.finish(rank);
  return llvm::Error::success();
}

PipelineExecutor::PipelineExecutor(std::unique_ptr<PipelinePlan> plan)
    : plan(std::move(plan)) {}

PipelineExecutor::~PipelineExecutor() = default;

llvm::Expected<std::unique_ptr<PipelineExecutor>>
PipelineExecutor::create(ModuleOp module, llvm::StringRef name) {
  auto plan = buildPipelinePlan(module, name);
  if (!plan)
    return plan.takeError();
  return std::unique_ptr<PipelineExecutor>(
      new PipelineExecutor(std::make_unique<PipelinePlan>(std::move(*plan))));
}

int64_t PipelineExecutor::getNumRanks() const { return plan->numRanks; }
int64_t PipelineExecutor::getNumMicrobatches() const {
  return plan->microbatches;
}
llvm::ArrayRef<RankedTensorType> PipelineExecutor::getInputTypes() const {
  return plan->inputTypes;
}
llvm::ArrayRef<std::optional<int64_t>>
PipelineExecutor::getInputVocabularies() const {
  return plan->vocabularies;
}
llvm::ArrayRef<RankedTensorType> PipelineExecutor::getOutputTypes() const {
  return plan->outputTypes;
}
llvm::ArrayRef<std::string> PipelineExecutor::getUpdatedParameters() const {
  return plan->updatedNames;
}

/// Checks the full-batch inputs and cuts each into its microbatches.
static llvm::Expected<std::vector<std::vector<Tensor>>>
sliceInputs(const PipelinePlan &plan, llvm::ArrayRef<Tensor> inputs) {
  if (inputs.size() != plan.inputTypes.size())
    return llvm::createStringError(
        "the step takes " + llvm::Twine(plan.inputTypes.size()) +
        " input(s), got " + llvm::Twine(inputs.size()));
  std::vector<std::vector<Tensor>> slices;
  for (auto [j, input] : llvm::enumerate(inputs)) {
    RankedTensorType micro = plan.microbatchInputTypes[j];
    if (!hasType(input, plan.inputTypes[j]))
      return llvm::createStringError(
          "step input " + llvm::Twine(j) + " must be " +
          tensorText(plan.inputTypes[j]) + " (" +
          llvm::Twine(plan.microbatches) + " microbatches of " +
          tensorText(micro) + "), got " + tensorText(input));
    int64_t size = micro.getNumElements();
    std::vector<Tensor> parts;
    for (int64_t k = 0; k < plan.microbatches; ++k) {
      Tensor part(micro);
      std::copy(input.data.begin() + k * size,
                input.data.begin() + (k + 1) * size, part.data.begin());
      parts.push_back(std::move(part));
    }
    slices.push_back(std::move(parts));
  }
  return slices;
}

/// The once-per-step slot `ref` from the lowest rank that produced it.
static const Tensor *findResult(const PipelinePlan &plan,
                                const std::vector<SlotTable> &tables,
                                const ResultRef &ref) {
  for (const SlotTable &slots : tables) {
    auto it = slots.find({ref.fragment, ref.result, kStepSlot});
    if (it != slots.end())
      return &it->second;
  }
  return nullptr;
}

llvm::Expected<PipelineStep>
PipelineExecutor::run(Interpreter &interpreter, llvm::ArrayRef<Tensor> inputs) {
  InProcessTransport transport(plan->numRanks);
  return run(interpreter, inputs, transport);
}

llvm::Expected<PipelineStep>
PipelineExecutor::run(Interpreter &interpreter, llvm::ArrayRef<Tensor> inputs,
                      Transport &transport) {
  auto slices = sliceInputs(*plan, inputs);
  if (!slices)
    return slices.takeError();
  RoundingOptions rounding;
  rounding.keepF32AsF64 = interpreter.getOptions().f64;
  StepContext context{*plan, interpreter, rounding, std::move(*slices),
                      transport};

  std::vector<SlotTable> tables(plan->numRanks);
  FirstError firstError;
  std::vector<std::thread> threads;
  for (int64_t rank = 0; rank < plan->numRanks; ++rank)
    threads.emplace_back([&, rank] {
      RankRunner runner(context, rank, tables[rank]);
      llvm::Error error = runner.run();
      if (!error)
        return;
      std::string message = llvm::toString(std::move(error));
      if (runner.stoppedByAbort())
        return;
      // Record before aborting, so that what the stopped ranks report
      // cannot come first.
      firstError.set(message);
      transport.abort(message);
    });
  for (std::thread &thread : threads)
    thread.join();
  if (auto message = firstError.get())
    return llvm::createStringError(*message);
  if (transport.isAborted())
    return llvm::createStringError("the step was aborted");

  PipelineStep step;
  for (auto [index, ref] : llvm::enumerate(plan->outputs)) {
    const Tensor *value = findResult(*plan, tables, ref);
    if (!value)
      return llvm::createStringError(
          "step output " + llvm::Twine(index) + " (" +
          slotName(ref.fragment, ref.result, kStepSlot) +
          ") was not produced: no rank ran @" + ref.fragment);
    step.outputs.push_back(*value);
  }
  const ParameterMap &parameters = interpreter.getParameters();
  for (const auto &[name, ref] : plan->updates) {
    const Tensor *value = findResult(*plan, tables, ref);
    if (!value)
      return llvm::createStringError(
          "the update of parameter '" + name + "' (" +
          slotName(ref.fragment, ref.result, kStepSlot) +
          ") was not produced: no rank ran @" + ref.fragment);
    auto it = parameters.find(name);
    if (it == parameters.end())
      return llvm::createStringError("parameter '" + name + "' updated by @" +
                                     ref.fragment + " has no value");
    if (!hasType(*value, ref.type) ||
        it->second.elementType != ref.type.getElementType() ||
        llvm::ArrayRef<int64_t>(it->second.shape) != ref.type.getShape())
      return llvm::createStringError(
          "parameter '" + name + "' is " + tensorText(it->second) +
          ", but its update " + slotName(ref.fragment, ref.result, kStepSlot) +
          " is " + tensorText(ref.type));
    step.updates[name] = *value;
  }
  return step;
}
