//===- PipelinePlan.cpp - what a step of an mpmd program needs ------------===//

#include "PipelinePlan.h"

#include "tandem/Eval/Inputs.h"
#include "tandem/Eval/Kernels.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

using namespace tandem::eval;
using namespace mlir;
namespace mpmd = tandem::mpmd;

std::string tandem::eval::slotName(llvm::StringRef fragment, int64_t result,
                                   int64_t microbatch) {
  std::string text = "@" + fragment.str() + "[" + std::to_string(result) + "]";
  if (microbatch != kStepSlot)
    text += " microbatch " + std::to_string(microbatch);
  return text;
}

static std::string typeText(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  return text;
}

static llvm::Error programError(mpmd::ProgramOp program,
                                const llvm::Twine &message) {
  return llvm::createStringError(formatLocation(program.getLoc()) +
                                 ": program @" + program.getSymName() + ": " +
                                 message);
}

static bool sameGrid(mpmd::ProgramOp a, mpmd::ProgramOp b) {
  return a.getStages() == b.getStages() && a.getChunks() == b.getChunks() &&
         a.getReplicas() == b.getReplicas() &&
         a.getMicrobatches() == b.getMicrobatches();
}

/// The program holding each rank's action list: the one program of the
/// unsplit form for all ranks, or each rank module's program.
static llvm::Expected<std::vector<mpmd::ProgramOp>>
findPrograms(ModuleOp module, llvm::StringRef name) {
  if (auto program = module.lookupSymbol<mpmd::ProgramOp>(name))
    return std::vector<mpmd::ProgramOp>(program.getNumRanks(), program);

  std::vector<mpmd::ProgramOp> programs;
  mpmd::ProgramOp first;
  for (auto inner : module.getOps<ModuleOp>()) {
    auto program = inner.lookupSymbol<mpmd::ProgramOp>(name);
    if (!program)
      continue;
    auto rankAttr = program->getAttrOfType<IntegerAttr>("mpmd.split_rank");
    if (!rankAttr)
      return programError(program, "a program in a nested module must carry "
                                   "'mpmd.split_rank' (the output of "
                                   "mpmd-split-programs)");
    if (!first) {
      first = program;
      programs.resize(program.getNumRanks());
    } else if (!sameGrid(first, program)) {
      return programError(program, "its grid differs from the one of " +
                                       formatLocation(first.getLoc()));
    }
    int64_t rank = rankAttr.getInt();
    if (rank < 0 || rank >= int64_t(programs.size()))
      return programError(
          program, "mpmd.split_rank " + llvm::Twine(rank) + " is outside the " +
                       llvm::Twine(programs.size()) + "-rank grid");
    if (programs[rank])
      return programError(program, "rank " + llvm::Twine(rank) +
                                       " is also split at " +
                                       formatLocation(programs[rank].getLoc()));
    programs[rank] = program;
  }
  if (!first)
    return llvm::createStringError("no mpmd.program '" + name +
                                   "' in the module or in a per-rank module");
  for (auto [rank, program] : llvm::enumerate(programs))
    if (!program)
      return programError(first, "no per-rank module holds rank " +
                                     llvm::Twine(rank) + "'s program");
  return programs;
}

/// The plan of rank `rank` of `program`.
static llvm::Expected<RankPlan> planRank(mpmd::ProgramOp program,
                                         int64_t rank) {
  RankPlan plan;
  plan.program = program;
  for (auto list : program.getBodyBlock().getOps<mpmd::RankOp>()) {
    if (int64_t(list.getRank()) == rank)
      plan.list = list;
    else if (program->hasAttr("mpmd.split_rank"))
      return programError(program, "the program split for rank " +
                                       llvm::Twine(rank) +
                                       " holds the list of rank " +
                                       llvm::Twine(list.getRank()));
  }
  for (auto fragment : program.getBodyBlock().getOps<mpmd::FragmentOp>())
    plan.symbols[fragment.getSymName()] = fragment;

  llvm::DenseMap<std::pair<Operation *, int64_t>, mpmd::TransferOp> incoming;
  for (auto transfer : program.getBodyBlock().getOps<mpmd::TransferOp>()) {
    auto dst = plan.symbols.lookup(transfer.getDst());
    if (dst)
      incoming[{dst.getOperation(), int64_t(transfer.getArg())}] = transfer;
  }

  for (auto fragment : program.getBodyBlock().getOps<mpmd::FragmentOp>()) {
    if (fragment.isExternal())
      continue;
    FragmentPlan fragmentPlan;
    fragmentPlan.op = fragment;
    fragmentPlan.perMicrobatch = fragment.isPerMicrobatch();
    for (unsigned i = 0; i < fragment.getNumArguments(); ++i) {
      ArgumentSource source;
      source.type = cast<RankedTensorType>(fragment.getArgumentTypes()[i]);
      std::string where = formatLocation(fragment.getLoc()) + ": fragment @" +
                          fragment.getSymName().str() + ": argument " +
                          std::to_string(i);
      if (auto param = fragment.getParamBinding(i)) {
        source.kind = ArgumentSource::Kind::Param;
        source.param = param.getValue().str();
      } else if (auto input = fragment.getInputBinding(i)) {
        if (!fragmentPlan.perMicrobatch)
          return llvm::createStringError(
              where + " is step input " + llvm::Twine(*input) +
              ", which is sliced per microbatch, but a " +
              mpmd::stringifyFragmentKind(fragment.getKind()) +
              " fragment runs once per step");
        source.kind = ArgumentSource::Kind::Input;
        source.input = *input;
      } else if (auto transfer =
                     incoming.lookup({fragment.getOperation(), i})) {
        auto producer = plan.symbols.lookup(transfer.getSrc());
        if (!producer)
          return llvm::createStringError(where + ": no fragment @" +
                                         transfer.getSrc() + " in the program");
        source.kind = ArgumentSource::Kind::Transfer;
        source.producer = producer.getSymName();
        source.result = transfer.getResult();
        source.producerPerMicrobatch = producer.isPerMicrobatch();
      } else {
        return llvm::createStringError(
            where + " is not bound (expected mpmd.param, mpmd.input or an "
                    "incoming mpmd.transfer)");
      }
      fragmentPlan.arguments.push_back(std::move(source));
    }
    plan.fragments[fragment.getSymName()] = std::move(fragmentPlan);
  }
  return plan;
}

namespace {
/// Collects step inputs, outputs and updates over every distinct program
/// (one, or one per rank), checking that programs agree.
struct Bindings {
  std::map<int64_t, std::pair<RankedTensorType, mpmd::FragmentOp>> inputs;
  std::map<int64_t, std::optional<int64_t>> vocabularies;
  std::map<int64_t, std::pair<ResultRef, mpmd::FragmentOp>> outputs;
  std::map<std::string, std::pair<ResultRef, mpmd::FragmentOp>> updates;

  llvm::Error add(mpmd::FragmentOp fragment);
};
} // namespace

static std::string describeResult(const ResultRef &ref,
                                  mpmd::FragmentOp fragment) {
  return "result " + std::to_string(ref.result) + " of @" + ref.fragment.str() +
         " (" + formatLocation(fragment.getLoc()) + ")";
}

llvm::Error Bindings::add(mpmd::FragmentOp fragment) {
  std::string where = formatLocation(fragment.getLoc()) + ": fragment @" +
                      fragment.getSymName().str();
  for (unsigned i = 0; i < fragment.getNumArguments(); ++i) {
    std::optional<int64_t> input = fragment.getInputBinding(i);
    if (!input)
      continue;
    auto type = cast<RankedTensorType>(fragment.getArgumentTypes()[i]);
    if (type.getRank() == 0)
      return llvm::createStringError(
          where + ": argument " + llvm::Twine(i) + " is step input " +
          llvm::Twine(*input) + " of type " + typeText(type) +
          ", which has no dim 0 to slice into microbatches");
    auto [it, inserted] = inputs.try_emplace(*input, type, fragment);
    if (!inserted && it->second.first != type)
      return llvm::createStringError(
          where + ": argument " + llvm::Twine(i) + " is step input " +
          llvm::Twine(*input) + " of type " + typeText(type) + ", but @" +
          it->second.second.getSymName() + " binds it as " +
          typeText(it->second.first));
    if (auto bound = vocabularyOf(fragment.getArgument(i))) {
      std::optional<int64_t> &vocab = vocabularies[*input];
      vocab = vocab ? std::min(*vocab, *bound) : *bound;
    }
  }
  for (unsigned i = 0; i < fragment.getNumResults(); ++i) {
    ResultRef ref{fragment.getSymName(), int64_t(i),
                  cast<RankedTensorType>(fragment.getResultTypes()[i])};
    if (std::optional<int64_t> output = fragment.getOutputBinding(i)) {
      if (*output < 0)
        return llvm::createStringError(
            where + ": result " + llvm::Twine(i) + " is step output " +
            llvm::Twine(*output) + " (expected an index >= 0)");
      auto [it, inserted] = outputs.try_emplace(*output, ref, fragment);
      const ResultRef &other = it->second.first;
      if (!inserted &&
          (other.fragment != ref.fragment || other.result != ref.result))
        return llvm::createStringError(
            "step output " + llvm::Twine(*output) + " is both " +
            describeResult(other, it->second.second) + " and " +
            describeResult(ref, fragment));
    }
    if (auto param = fragment.getUpdateBinding(i)) {
      auto [it, inserted] =
          updates.try_emplace(param.getValue().str(), ref, fragment);
      const ResultRef &other = it->second.first;
      if (!inserted &&
          (other.fragment != ref.fragment || other.result != ref.result))
        return llvm::createStringError(
            "parameter '" + param.getValue() + "' is updated by both " +
            describeResult(other, it->second.second) + " and " +
            describeResult(ref, fragment));
    }
  }
  return llvm::Error::success();
}

llvm::Expected<PipelinePlan>
tandem::eval::buildPipelinePlan(ModuleOp module, llvm::StringRef name) {
  auto programs = findPrograms(module, name);
  if (!programs)
    return programs.takeError();
  PipelinePlan plan;
  mpmd::ProgramOp first = programs->front();
  plan.numRanks = first.getNumRanks();
  plan.microbatches = first.getMicrobatches();

  Bindings bindings;
  llvm::DenseMap<Operation *, bool> seen;
  for (auto [rank, program] : llvm::enumerate(*programs)) {
    auto rankPlan = planRank(program, rank);
    if (!rankPlan)
      return rankPlan.takeError();
    plan.ranks.push_back(std::move(*rankPlan));
    if (!seen.try_emplace(program.getOperation(), true).second)
      continue;
    for (auto fragment : program.getBodyBlock().getOps<mpmd::FragmentOp>())
      if (!fragment.isExternal())
        if (llvm::Error error = bindings.add(fragment))
          return std::move(error);
  }

  int64_t numInputs =
      bindings.inputs.empty() ? 0 : bindings.inputs.rbegin()->first + 1;
  for (int64_t j = 0; j < numInputs; ++j) {
    auto it = bindings.inputs.find(j);
    if (it == bindings.inputs.end())
      return programError(first, "step input " + llvm::Twine(j) +
                                     " is bound by no fragment argument "
                                     "(inputs 0.." +
                                     llvm::Twine(numInputs - 1) + " are used)");
    RankedTensorType type = it->second.first;
    llvm::SmallVector<int64_t> shape(type.getShape());
    shape[0] *= plan.microbatches;
    plan.microbatchInputTypes.push_back(type);
    plan.inputTypes.push_back(
        RankedTensorType::get(shape, type.getElementType()));
    plan.vocabularies.push_back(bindings.vocabularies[j]);
  }

  int64_t numOutputs =
      bindings.outputs.empty() ? 0 : bindings.outputs.rbegin()->first + 1;
  for (int64_t k = 0; k < numOutputs; ++k) {
    auto it = bindings.outputs.find(k);
    if (it == bindings.outputs.end())
      return programError(
          first, "step output " + llvm::Twine(k) +
                     " is produced by no fragment result "
                     "(outputs 0.." +
                     llvm::Twine(numOutputs - 1) + " are expected, found " +
                     llvm::Twine(bindings.outputs.size()) + ")");
    plan.outputs.push_back(it->second.first);
    plan.outputTypes.push_back(it->second.first.type);
  }
  for (auto &[param, entry] : bindings.updates) {
    plan.updates.push_back({param, entry.first});
    plan.updatedNames.push_back(param);
  }
  return plan;
}
