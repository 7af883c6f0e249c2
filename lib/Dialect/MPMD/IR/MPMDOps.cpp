//===- MPMDOps.cpp - mpmd dialect operations ------------------------------===//

#include "tandem/Dialect/MPMD/IR/MPMDOps.h"
#include "tandem/Dialect/NN/IR/NNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace tandem::mpmd;
namespace nn = tandem::nn;

bool tandem::mpmd::isPerMicrobatchKind(FragmentKind kind) {
  switch (kind) {
  case FragmentKind::Fwd:
  case FragmentKind::Bwd:
  case FragmentKind::BwdInput:
  case FragmentKind::BwdWeight:
    return true;
  case FragmentKind::Optimizer:
  case FragmentKind::StepPrologue:
  case FragmentKind::StepEpilogue:
    return false;
  }
  return false;
}

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

namespace {

/// The fragment `name` of the program enclosing `op`, or null after
/// reporting that `name` is not one.
FragmentOp lookupFragment(Operation *op, SymbolTableCollection &tables,
                          FlatSymbolRefAttr name) {
  ProgramOp program = ProgramOp::getParentProgram(op);
  if (!program)
    return nullptr;
  Operation *symbol = tables.lookupSymbolIn(program, name.getAttr());
  auto fragment = dyn_cast_or_null<FragmentOp>(symbol);
  // Only fragments are symbols in a program.
  if (!fragment)
    op->emitOpError() << name << " does not name an mpmd.fragment of "
                      << "program @" << program.getSymName();
  return fragment;
}

/// Checks that `microbatch` fits `fragment`'s kind: present and below the
/// program's microbatch count for per-microbatch kinds, absent otherwise.
LogicalResult verifyMicrobatch(Operation *op, FragmentOp fragment,
                               std::optional<int64_t> microbatch) {
  ProgramOp program = ProgramOp::getParentProgram(op);
  if (!fragment.isPerMicrobatch()) {
    if (microbatch)
      return op->emitOpError()
             << "fragment @" << fragment.getSymName() << " of kind "
             << stringifyFragmentKind(fragment.getKind())
             << " runs once per step, expected no microbatch, found "
             << *microbatch;
    return success();
  }
  if (!microbatch)
    return op->emitOpError()
           << "fragment @" << fragment.getSymName() << " of kind "
           << stringifyFragmentKind(fragment.getKind())
           << " runs once per microbatch, expected a microbatch index";
  if (*microbatch < 0 || *microbatch >= program.getMicrobatches())
    return op->emitOpError()
           << "expected a microbatch index in [0, " << program.getMicrobatches()
           << "), found " << *microbatch;
  return success();
}

/// Checks a slot reference `@fragment[result]` (of `microbatch`) whose
/// value has type `type`.
LogicalResult verifySlot(Operation *op, SymbolTableCollection &tables,
                         FlatSymbolRefAttr name, int64_t result,
                         std::optional<int64_t> microbatch, Type type) {
  FragmentOp fragment = lookupFragment(op, tables, name);
  if (!fragment)
    return failure();
  int64_t numResults = fragment.getNumResults();
  if (result < 0 || result >= numResults)
    return op->emitOpError() << "expected a result index in [0, " << numResults
                             << ") of fragment @" << fragment.getSymName()
                             << ", found " << result;
  Type expected = fragment.getResultTypes()[result];
  if (expected != type)
    return op->emitOpError()
           << "type " << type << " does not match result " << result
           << " of fragment @" << fragment.getSymName() << ", " << expected;
  return verifyMicrobatch(op, fragment, microbatch);
}

/// Checks that `rank` is a rank of the grid of `op`'s program; `what` names
/// the operand in messages.
LogicalResult verifyRankInGrid(Operation *op, StringRef what, int64_t rank) {
  ProgramOp program = ProgramOp::getParentProgram(op);
  if (!program)
    return success();
  int64_t numRanks = program.getNumRanks();
  if (rank < 0 || rank >= numRanks)
    return op->emitOpError()
           << "expected " << what << " in [0, " << numRanks << ") (stages "
           << program.getStages() << " x replicas " << program.getReplicas()
           << "), found " << rank;
  return success();
}

/// Checks a point-to-point peer: a rank of the grid other than this one.
LogicalResult verifyPeer(Operation *op, int64_t peer) {
  if (failed(verifyRankInGrid(op, "peer rank", peer)))
    return failure();
  std::optional<int64_t> own = RankOp::getOwnRank(op);
  if (own && *own == peer)
    return op->emitOpError() << "expected a peer other than this rank, found "
                             << peer << " on rank " << *own;
  return success();
}

/// Checks a collective's group: at least two distinct ranks of the grid,
/// including this one.
LogicalResult verifyGroup(Operation *op, ArrayRef<int64_t> group) {
  if (group.size() < 2)
    return op->emitOpError()
           << "expected a group of at least 2 ranks, found " << group.size();
  llvm::SmallSet<int64_t, 8> seen;
  for (int64_t member : group) {
    if (failed(verifyRankInGrid(op, "group member", member)))
      return failure();
    if (!seen.insert(member).second)
      return op->emitOpError() << "expected distinct group members, found rank "
                               << member << " twice";
  }
  std::optional<int64_t> own = RankOp::getOwnRank(op);
  if (own && !seen.contains(*own))
    return op->emitOpError() << "expected the group to include this rank ("
                             << *own << "), found [" << group << "]";
  return success();
}

/// Checks the wire element type of a send/recv of `type`: the element type
/// itself. A value crosses a link as it is; a narrower edge is a cast in
/// the program (nn.cast, or nn.quantize with its scales), which
/// mpmd-compress-transfers writes.
LogicalResult verifyWire(Operation *op, Type type, Type wire) {
  Type element = cast<RankedTensorType>(type).getElementType();
  if (wire == element)
    return success();
  return op->emitOpError()
         << "expected wire type " << element
         << " (the value's element type: a narrower edge is a cast in the "
            "program, e.g. mpmd-compress-transfers' bf16 policy), found "
         << wire;
}

LogicalResult verifyIndex(Operation *op, StringRef what, int64_t value) {
  if (value < 0)
    return op->emitOpError()
           << "expected a non-negative " << what << ", found " << value;
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state, StringRef name,
                      int64_t stages, int64_t chunks, int64_t replicas,
                      int64_t microbatches) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getStagesAttrName(state.name),
                     builder.getI64IntegerAttr(stages));
  state.addAttribute(getChunksAttrName(state.name),
                     builder.getI64IntegerAttr(chunks));
  state.addAttribute(getReplicasAttrName(state.name),
                     builder.getI64IntegerAttr(replicas));
  state.addAttribute(getMicrobatchesAttrName(state.name),
                     builder.getI64IntegerAttr(microbatches));
  state.addRegion()->emplaceBlock();
}

LogicalResult ProgramOp::verify() {
  for (auto [what, value] :
       {std::pair<StringRef, int64_t>{"stages", getStages()},
        {"chunks", getChunks()},
        {"replicas", getReplicas()},
        {"microbatches", getMicrobatches()}})
    if (value < 1)
      return emitOpError() << "expected " << what << " >= 1, found " << value;
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  llvm::DenseMap<int64_t, RankOp> ranks;
  llvm::DenseMap<StringAttr, FragmentOp> fragments;
  for (Operation &op : getBodyBlock()) {
    if (auto rank = dyn_cast<RankOp>(op)) {
      auto [it, inserted] = ranks.try_emplace(rank.getRank(), rank);
      if (!inserted)
        return rank.emitOpError()
               << "duplicate action list for rank " << rank.getRank()
               << " (expected one mpmd.rank per rank)";
      continue;
    }
    if (auto fragment = dyn_cast<FragmentOp>(op)) {
      fragments[fragment.getSymNameAttr()] = fragment;
      continue;
    }
    if (!isa<TransferOp>(op))
      return op.emitOpError()
             << "is not allowed in an mpmd.program (expected mpmd.fragment, "
                "mpmd.transfer or mpmd.rank)";
  }

  // Every fragment argument is bound exactly once. Transfers naming unknown
  // fragments or out-of-range arguments were reported by their verifiers.
  llvm::DenseMap<std::pair<Operation *, int64_t>, TransferOp> incoming;
  for (auto transfer : getBodyBlock().getOps<TransferOp>()) {
    FragmentOp dst = fragments.lookup(transfer.getDstAttr().getAttr());
    if (!dst)
      continue;
    auto [it, inserted] =
        incoming.try_emplace({dst.getOperation(), transfer.getArg()}, transfer);
    if (!inserted)
      return transfer.emitOpError()
             << "argument " << transfer.getArg() << " of fragment @"
             << dst.getSymName()
             << " already has an incoming transfer (expected one binding per "
                "argument)";
  }
  for (auto [name, fragment] : fragments) {
    for (unsigned i = 0, e = fragment.getNumArguments(); i < e; ++i) {
      bool param = static_cast<bool>(fragment.getParamBinding(i));
      bool input = fragment.getInputBinding(i).has_value();
      bool transfer = incoming.contains({fragment.getOperation(), i});
      int bindings = int(param) + int(input) + int(transfer);
      if (bindings == 1)
        continue;
      if (bindings == 0)
        return fragment.emitOpError()
               << "argument " << i
               << " is not bound (expected an mpmd.param or mpmd.input "
                  "attribute or one incoming mpmd.transfer)";
      return fragment.emitOpError()
             << "argument " << i << " is bound " << bindings
             << " times (expected exactly one of mpmd.param, mpmd.input and "
                "an incoming mpmd.transfer)";
    }
  }

  // Step inputs have one microbatch type; parameters are updated and outputs
  // produced at most once per program.
  llvm::DenseMap<int64_t, std::pair<FragmentOp, Type>> inputTypes;
  llvm::DenseMap<Attribute, FragmentOp> updated;
  llvm::DenseMap<int64_t, FragmentOp> outputs;
  for (FragmentOp fragment : getBodyBlock().getOps<FragmentOp>()) {
    for (unsigned i = 0, e = fragment.getNumArguments(); i < e; ++i) {
      std::optional<int64_t> input = fragment.getInputBinding(i);
      if (!input)
        continue;
      Type type = fragment.getArgumentTypes()[i];
      auto [it, inserted] = inputTypes.try_emplace(*input, fragment, type);
      if (!inserted && it->second.second != type)
        return fragment.emitOpError()
               << "argument " << i << " is step input " << *input << " of type "
               << type << ", but fragment @" << it->second.first.getSymName()
               << " reads it as " << it->second.second
               << " (expected one microbatch type per step input)";
    }
    for (unsigned i = 0, e = fragment.getNumResults(); i < e; ++i) {
      bool hasUpdate = static_cast<bool>(fragment.getUpdateBinding(i));
      std::optional<int64_t> output = fragment.getOutputBinding(i);
      if ((hasUpdate || output) && fragment.isPerMicrobatch())
        return fragment.emitOpError()
               << "result " << i << " carries '"
               << (hasUpdate ? MPMDDialect::kUpdateAttrName
                             : MPMDDialect::kOutputAttrName)
               << "', but a " << stringifyFragmentKind(fragment.getKind())
               << " fragment runs once per microbatch (expected a "
                  "once-per-step fragment)";
      if (hasUpdate) {
        FlatSymbolRefAttr param = fragment.getUpdateBinding(i);
        auto [it, inserted] = updated.try_emplace(param, fragment);
        if (!inserted)
          return fragment.emitOpError()
                 << "result " << i << " updates " << param
                 << ", which fragment @" << it->second.getSymName()
                 << " already updates (expected one update per parameter)";
      }
      if (output) {
        auto [it, inserted] = outputs.try_emplace(*output, fragment);
        if (!inserted)
          return fragment.emitOpError()
                 << "result " << i << " is step output " << *output
                 << ", which fragment @" << it->second.getSymName()
                 << " already produces (expected one result per output)";
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// FragmentOp
//===----------------------------------------------------------------------===//

void FragmentOp::build(OpBuilder &builder, OperationState &state,
                       StringRef name, FunctionType type, int64_t stage,
                       int64_t chunk, FragmentKind kind) {
  state.addAttribute(getSymNameAttrName(state.name),
                     builder.getStringAttr(name));
  state.addAttribute(getFunctionTypeAttrName(state.name), TypeAttr::get(type));
  state.addAttribute(getStageAttrName(state.name),
                     builder.getI64IntegerAttr(stage));
  state.addAttribute(getChunkAttrName(state.name),
                     builder.getI64IntegerAttr(chunk));
  state.getOrAddProperties<Properties>().kind = kind;
  Block &entry = state.addRegion()->emplaceBlock();
  for (Type input : type.getInputs())
    entry.addArgument(input, state.location);
}

bool FragmentOp::isPerMicrobatch() { return isPerMicrobatchKind(getKind()); }

FlatSymbolRefAttr FragmentOp::getParamBinding(unsigned index) {
  return dyn_cast_or_null<FlatSymbolRefAttr>(
      getArgAttr(index, MPMDDialect::kParamAttrName));
}

std::optional<int64_t> FragmentOp::getInputBinding(unsigned index) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(
          getArgAttr(index, MPMDDialect::kInputAttrName)))
    return attr.getInt();
  return std::nullopt;
}

FlatSymbolRefAttr FragmentOp::getUpdateBinding(unsigned index) {
  return dyn_cast_or_null<FlatSymbolRefAttr>(
      getResultAttr(index, MPMDDialect::kUpdateAttrName));
}

std::optional<int64_t> FragmentOp::getOutputBinding(unsigned index) {
  if (auto attr = dyn_cast_or_null<IntegerAttr>(
          getResultAttr(index, MPMDDialect::kOutputAttrName)))
    return attr.getInt();
  return std::nullopt;
}

ParseResult FragmentOp::parse(OpAsmParser &parser, OperationState &result) {
  StringAttr name;
  if (parser.parseSymbolName(name, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();

  int64_t stage = 0, chunk = 0;
  if (parser.parseKeyword("stage") || parser.parseInteger(stage) ||
      parser.parseKeyword("chunk") || parser.parseInteger(chunk) ||
      parser.parseKeyword("kind"))
    return failure();
  SMLoc kindLoc = parser.getCurrentLocation();
  StringRef kindWord;
  if (parser.parseKeyword(&kindWord))
    return failure();
  std::optional<FragmentKind> kind = symbolizeFragmentKind(kindWord);
  if (!kind)
    return parser.emitError(kindLoc)
           << "expected a fragment kind (fwd, bwd, bwd_input, bwd_weight, "
              "optimizer, step_prologue, step_epilogue), found '"
           << kindWord << "'";

  SmallVector<OpAsmParser::Argument> args;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignatureWithArguments(
          parser, /*allowVariadic=*/false, args, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argTypes;
  for (OpAsmParser::Argument &arg : args)
    argTypes.push_back(arg.type);

  Builder &builder = parser.getBuilder();
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(builder.getFunctionType(argTypes, resultTypes)));
  result.addAttribute(getStageAttrName(result.name),
                      builder.getI64IntegerAttr(stage));
  result.addAttribute(getChunkAttrName(result.name),
                      builder.getI64IntegerAttr(chunk));
  result.getOrAddProperties<Properties>().kind = *kind;
  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  call_interface_impl::addArgAndResultAttrs(builder, result, args, resultAttrs,
                                            getArgAttrsAttrName(result.name),
                                            getResAttrsAttrName(result.name));
  // No body: a declaration of a fragment run by another rank.
  Region *body = result.addRegion();
  OptionalParseResult parsed =
      parser.parseOptionalRegion(*body, args, /*enableNameShadowing=*/false);
  return parsed.has_value() ? *parsed : success();
}

void FragmentOp::print(OpAsmPrinter &p) {
  p << ' ';
  p.printSymbolName(getSymName());
  p << " stage " << getStage() << " chunk " << getChunk() << " kind "
    << stringifyFragmentKind(getKind()) << ' ';
  function_interface_impl::printFunctionSignature(
      p, *this, getArgumentTypes(), /*isVariadic=*/false, getResultTypes());
  function_interface_impl::printFunctionAttributes(
      p, *this,
      {getSymNameAttrName(), getFunctionTypeAttrName(), getStageAttrName(),
       getChunkAttrName(), getArgAttrsAttrName(), getResAttrsAttrName()});
  if (isExternal())
    return;
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                /*printBlockTerminators=*/true);
}

LogicalResult FragmentOp::verify() {
  ProgramOp program = ProgramOp::getParentProgram(*this);
  if (getStage() < 0 || getStage() >= program.getStages())
    return emitOpError() << "expected a stage in [0, " << program.getStages()
                         << "), found " << getStage();
  if (getChunk() < 0 || getChunk() >= program.getChunks())
    return emitOpError() << "expected a chunk in [0, " << program.getChunks()
                         << "), found " << getChunk();
  auto checkStatic = [&](StringRef what, unsigned index,
                         Type type) -> LogicalResult {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (tensor && tensor.hasStaticShape())
      return nn::verifyTensorSize(*this, type, what + (" " + Twine(index)));
    return emitOpError() << "expected " << what << " " << index
                         << " to be a statically shaped tensor, found " << type;
  };
  for (auto [i, type] : llvm::enumerate(getArgumentTypes()))
    if (failed(checkStatic("argument", i, type)))
      return failure();
  for (auto [i, type] : llvm::enumerate(getResultTypes()))
    if (failed(checkStatic("result", i, type)))
      return failure();

  Attribute remote = (*this)->getAttr(MPMDDialect::kRemoteAttrName);
  if (remote && !isa<UnitAttr>(remote))
    return emitOpError() << "expected '" << MPMDDialect::kRemoteAttrName
                         << "' to be a unit attribute, found " << remote;
  if (isExternal()) {
    if (!remote)
      return emitOpError()
             << "has no body but no '" << MPMDDialect::kRemoteAttrName
             << "' attribute (only a fragment that runs on another rank may "
                "be a declaration)";
    if (getNumArguments() != 0)
      return emitOpError() << "is a declaration but has " << getNumArguments()
                           << " arguments (expected none: a remote "
                              "fragment's arguments are bound on its own "
                              "rank)";
    return success();
  }
  if (remote)
    return emitOpError() << "has '" << MPMDDialect::kRemoteAttrName
                         << "' but a body (expected a declaration: a remote "
                            "fragment's body is compiled on its own rank)";

  // FunctionOpInterface checks the entry block against the signature.
  Block &entry = getBody().front();
  if (entry.empty() || !isa<YieldOp>(entry.back()))
    return emitOpError() << "expected the body to end with mpmd.yield";
  return success();
}

LogicalResult FragmentOp::verifySymbolUses(SymbolTableCollection &tables) {
  // Parameters live in the module around the program.
  Operation *module = (*this)->getParentOp()->getParentOp();
  auto check = [&](StringRef what, unsigned i, FlatSymbolRefAttr name,
                   Type type) -> LogicalResult {
    if (!name)
      return success();
    auto param =
        module ? tables.lookupSymbolIn<tandem::nn::ParameterOp>(module, name)
               : nullptr;
    if (!param)
      return emitOpError() << what << " " << i << ": " << name
                           << " does not name an nn.parameter";
    Type expected = param.getType();
    if (expected != type)
      return emitOpError() << what << " " << i << " has type " << type
                           << ", expected the type of parameter " << name
                           << ", " << expected;
    return success();
  };
  for (unsigned i = 0, e = getNumArguments(); i < e; ++i)
    if (failed(check("argument", i, getParamBinding(i), getArgumentTypes()[i])))
      return failure();
  for (unsigned i = 0, e = getNumResults(); i < e; ++i)
    if (failed(check("result", i, getUpdateBinding(i), getResultTypes()[i])))
      return failure();
  return success();
}

//===----------------------------------------------------------------------===//
// YieldOp
//===----------------------------------------------------------------------===//

LogicalResult YieldOp::verify() {
  auto fragment = cast<FragmentOp>((*this)->getParentOp());
  ArrayRef<Type> expected = fragment.getResultTypes();
  if (getValues().size() != expected.size())
    return emitOpError() << "expected " << expected.size()
                         << " values (the results of fragment @"
                         << fragment.getSymName() << "), found "
                         << getValues().size();
  for (auto [i, value, type] : llvm::enumerate(getValues(), expected))
    if (value.getType() != type)
      return emitOpError() << "value " << i << " has type " << value.getType()
                           << ", expected result type " << type
                           << " of fragment @" << fragment.getSymName();
  return success();
}

//===----------------------------------------------------------------------===//
// TransferOp
//===----------------------------------------------------------------------===//

LogicalResult TransferOp::verify() {
  if (failed(verifyIndex(*this, "result index", getResult())) ||
      failed(verifyIndex(*this, "argument index", getArg())))
    return failure();
  if (getSrc() == getDst())
    return emitOpError() << "expected different source and destination "
                            "fragments, found "
                         << getSrcAttr() << " twice";
  return success();
}

LogicalResult TransferOp::verifySymbolUses(SymbolTableCollection &tables) {
  // A template edge connects executions by the fragments' kinds (see the
  // description), so no microbatch is checked here.
  FragmentOp src = lookupFragment(*this, tables, getSrcAttr());
  if (!src)
    return failure();
  int64_t numResults = src.getNumResults();
  if (getResult() >= numResults)
    return emitOpError() << "expected a result index in [0, " << numResults
                         << ") of fragment @" << src.getSymName() << ", found "
                         << getResult();
  Type produced = src.getResultTypes()[getResult()];
  if (produced != getType())
    return emitOpError() << "type " << getType() << " does not match result "
                         << getResult() << " of fragment @" << src.getSymName()
                         << ", " << produced;
  FragmentOp dst = lookupFragment(*this, tables, getDstAttr());
  if (!dst)
    return failure();
  int64_t numArgs = dst.getNumArguments();
  if (getArg() >= numArgs)
    return emitOpError() << "expected an argument index in [0, " << numArgs
                         << ") of fragment @" << dst.getSymName() << ", found "
                         << getArg();
  Type consumed = dst.getArgumentTypes()[getArg()];
  if (consumed != getType())
    return emitOpError() << "type " << getType() << " does not match argument "
                         << getArg() << " of fragment @" << dst.getSymName()
                         << ", " << consumed;
  return success();
}

//===----------------------------------------------------------------------===//
// RankOp
//===----------------------------------------------------------------------===//

void RankOp::build(OpBuilder &builder, OperationState &state, int64_t rank) {
  state.addAttribute(getRankAttrName(state.name),
                     builder.getI64IntegerAttr(rank));
  state.addRegion()->emplaceBlock();
}

std::optional<int64_t> RankOp::getOwnRank(Operation *op) {
  if (auto rank = op->getParentOfType<RankOp>())
    return rank.getRank();
  return std::nullopt;
}

LogicalResult RankOp::verify() {
  if (failed(verifyRankInGrid(*this, "a rank", getRank())))
    return failure();
  for (Operation &op : getBodyBlock())
    if (!isa<RunOp, SendOp, RecvOp, AllReduceOp, BroadcastOp>(op))
      return op.emitOpError()
             << "is not an action (expected mpmd.run, mpmd.send, mpmd.recv, "
                "mpmd.all_reduce or mpmd.broadcast in an mpmd.rank)";
  return success();
}

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

LogicalResult RunOp::verifySymbolUses(SymbolTableCollection &tables) {
  FragmentOp fragment = lookupFragment(*this, tables, getFragmentAttr());
  if (!fragment)
    return failure();
  if (fragment.isExternal())
    return emitOpError() << "fragment @" << fragment.getSymName()
                         << " is a declaration of a fragment that runs on "
                            "another rank";
  ProgramOp program = ProgramOp::getParentProgram(*this);
  int64_t rank = *RankOp::getOwnRank(*this);
  int64_t stage = program.getStageOfRank(rank);
  if (fragment.getStage() != stage)
    return emitOpError() << "fragment @" << fragment.getSymName()
                         << " is placed on stage " << fragment.getStage()
                         << ", but rank " << rank << " runs stage " << stage;
  return verifyMicrobatch(*this, fragment, getMicrobatch());
}

LogicalResult SendOp::verify() {
  if (failed(verifyIndex(*this, "result index", getResult())) ||
      failed(verifyIndex(*this, "channel", getChannel())) ||
      failed(verifyPeer(*this, getPeer())))
    return failure();
  return verifyWire(*this, getType(), getWire());
}

LogicalResult SendOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySlot(*this, tables, getFragmentAttr(), getResult(),
                    getMicrobatch(), getType());
}

LogicalResult RecvOp::verify() {
  if (failed(verifyIndex(*this, "result index", getResult())) ||
      failed(verifyIndex(*this, "channel", getChannel())) ||
      failed(verifyPeer(*this, getPeer())))
    return failure();
  return verifyWire(*this, getType(), getWire());
}

LogicalResult RecvOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySlot(*this, tables, getFragmentAttr(), getResult(),
                    getMicrobatch(), getType());
}

LogicalResult AllReduceOp::verify() {
  if (failed(verifyIndex(*this, "result index", getResult())))
    return failure();
  return verifyGroup(*this, getGroup());
}

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySlot(*this, tables, getFragmentAttr(), getResult(),
                    getMicrobatch(), getType());
}

LogicalResult BroadcastOp::verify() {
  if (failed(verifyIndex(*this, "result index", getResult())) ||
      failed(verifyGroup(*this, getGroup())))
    return failure();
  if (!llvm::is_contained(getGroup(), getRoot()))
    return emitOpError() << "expected the root to be a group member, found "
                         << "root " << getRoot() << " and group [" << getGroup()
                         << "]";
  return success();
}

LogicalResult BroadcastOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifySlot(*this, tables, getFragmentAttr(), getResult(),
                    getMicrobatch(), getType());
}

#define GET_OP_CLASSES
#include "tandem/Dialect/MPMD/IR/MPMDOps.cpp.inc"
