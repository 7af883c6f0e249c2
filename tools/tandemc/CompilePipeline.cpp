//===- CompilePipeline.cpp - tandemc's compile phases ---------------------===//

#include "CompilePipeline.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/Twine.h"

using namespace llvm;
using namespace tandem::tandemc;

const char *tandem::tandemc::phaseName(Phase phase) {
  switch (phase) {
  case Phase::NN:
    return "nn";
  case Phase::Precision:
    return "precision";
  case Phase::Grad:
    return "grad";
  case Phase::Train:
    return "train";
  case Phase::Partition:
    return "partition";
  case Phase::Schedule:
    return "schedule";
  case Phase::Remat:
    return "remat";
  case Phase::Lowered:
    return "lowered";
  case Phase::Verified:
    return "verified";
  case Phase::Split:
    return "split";
  case Phase::Native:
    return "native";
  }
  return "?";
}

static Error invalid(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// Options spliced into a pass's `{...}` must not close it early.
static Error checkSpliced(StringRef flag, StringRef value) {
  if (value.find_first_of("{}") != StringRef::npos)
    return invalid("--" + flag + " takes pass options (name=value ...), " +
                   "found braces in '" + value + "'");
  return Error::success();
}

static std::string passes(const Twine &list) { return list.str(); }

Expected<std::vector<PhasePipeline>>
tandem::tandemc::buildPhases(const CompileOptions &o, Phase last) {
  // Each message names the option at fault.
  if (o.stages < 1)
    return invalid("--stages must be at least 1, found " + Twine(o.stages));
  if (o.microbatches < 1)
    return invalid("--microbatches must be at least 1, found " +
                   Twine(o.microbatches));
  if (o.chunks < 0)
    return invalid("--chunks must be at least 0 (0: one per stage), found " +
                   Twine(o.chunks));
  if (o.classMultiple < 1)
    return invalid("--pad-classes must be at least 1 (1: no padding), found " +
                   Twine(o.classMultiple));
  if (o.precision != "f32" && o.precision != "bf16" && o.precision != "fp16")
    return invalid("--precision must be f32, bf16 or fp16, found '" +
                   o.precision + "'");
  StringRef remat = o.remat;
  std::string rematOptions;
  if (remat == "full" || remat == "selective" || remat == "annotated") {
    rematOptions = ("policy=" + remat).str();
  } else if (remat.consume_front("budget=")) {
    uint64_t bytes;
    if (remat.getAsInteger(10, bytes) || bytes == 0)
      return invalid("--remat=budget=<bytes> needs a positive byte count, "
                     "found '" +
                     o.remat + "'");
    rematOptions = "policy=budget budget=" + std::to_string(bytes);
  } else if (remat != "none") {
    return invalid("--remat must be none, full, selective, annotated or "
                   "budget=<bytes>, found '" +
                   o.remat + "'");
  }
  // The budget's search chooses splits too.
  if (o.recomputeSplits && !StringRef(o.remat).starts_with("budget="))
    rematOptions = (rematOptions.empty() ? "policy=none" : rematOptions) +
                   " recompute-splits=true";
  for (auto [flag, value] :
       {std::pair<StringRef, StringRef>{"optimizer", o.optimizer},
        {"precision-options", o.precisionOptions},
        {"schedule", o.schedule},
        {"compress", o.compress},
        {"subspace", o.subspace},
        {"function", o.function}})
    if (Error error = checkSpliced(flag, value))
      return std::move(error);

  int64_t chunks = o.chunks                           ? o.chunks
                   : o.schedule == "interleaved-1f1b" ? 2
                                                      : 1;
  bool split = o.schedule == "zb-h1";
  std::string grid = "stages=" + std::to_string(o.stages) +
                     " chunks=" + std::to_string(chunks) +
                     " microbatches=" + std::to_string(o.microbatches) +
                     " split-backward=" + (split ? "true" : "false");
  std::string partition = "mpmd-partition{function=train_step " + grid + "}";
  if (!o.partitioner.empty())
    partition = o.partitioner + "," + partition;

  std::vector<PhasePipeline> phases = {
      {Phase::NN,
       passes((o.subspace.empty() ? std::string()
                                  : "nn-subspace{function=" + o.function + " " +
                                        o.subspace + "}") +
              (o.subspace.empty() || o.classMultiple == 1 ? "" : ",") +
              (o.classMultiple == 1
                   ? std::string()
                   : "nn-pad-classes{multiple=" +
                         std::to_string(o.classMultiple) + "}"))},
      {Phase::Precision,
       o.precision == "f32"
           ? ""
           : passes("nn-mixed-precision{function=" + o.function + " policy=" +
                    o.precision + (o.precisionOptions.empty() ? "" : " ") +
                    o.precisionOptions + "}")},
      {Phase::Grad,
       passes("nn-autodiff{function=" + o.function +
              (o.fusedAttention ? " decompose-attention=false" : "") +
              (o.fusedNorms ? " decompose-norms=false" : "") +
              (o.fusedGelu ? " decompose-gelu=false" : "") + "}")},
      {Phase::Train, passes("nn-optimizer{function=" + o.function + "_grad " +
                            o.optimizer + "}")},
      {Phase::Partition, passes(partition)},
      {Phase::Schedule, passes("mpmd-schedule{schedule=" + o.schedule + "}")},
      {Phase::Remat,
       rematOptions.empty() ? "" : passes("mpmd-remat{" + rematOptions + "}")},
      {Phase::Lowered, passes((o.compress.empty() ? ""
                                                  : "mpmd-compress-transfers{" +
                                                        o.compress + "},") +
                              std::string("mpmd-lower-transfers"))},
      {Phase::Verified,
       passes(std::string(o.fifoPairs ? "mpmd-verify{fifo-pairs=true}"
                                      : "mpmd-verify") +
              (o.memory ? ",mpmd-memory" : ""))},
      {Phase::Split, passes("mpmd-split-programs")},
      // The rank lowering is no pass: tandemc runs it (NativeCompile.h),
      // writing the files and timing and parallelizing the compilation.
      {Phase::Native, ""},
  };
  while (!phases.empty() && phases.back().phase != last)
    phases.pop_back();
  return phases;
}
