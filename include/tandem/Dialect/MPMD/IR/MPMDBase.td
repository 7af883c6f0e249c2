//===- MPMDBase.td - mpmd dialect definition and enums ---------*- tablegen -*-===//
//
// The `mpmd` dialect holds a pipeline-parallel training step: fragments of nn
// ops placed on pipeline stages, the logical data flow between them, and the
// ordered per-rank action lists that run them.
//
//===----------------------------------------------------------------------===//

#ifndef TANDEM_DIALECT_MPMD_IR_MPMDBASE_TD
#define TANDEM_DIALECT_MPMD_IR_MPMDBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/EnumAttr.td"

def MPMD_Dialect : Dialect {
  let name = "mpmd";
  let cppNamespace = "::tandem::mpmd";
  let summary = "Pipeline-parallel (MPMD) training programs";
  let description = [{
    The `mpmd` dialect describes one training step over a grid of ranks:
    `stages` pipeline stages, each holding `chunks` model chunks (interleaved
    schedules), times `replicas` data-parallel replicas, over `microbatches`
    microbatches. Rank `r` runs stage `r mod stages` of replica
    `r / stages`.

    An `mpmd.program` holds:

    - `mpmd.fragment`s: isolated regions of `nn` ops placed on a
      (stage, chunk), with a kind (`fwd`, `bwd`, `bwd_input`, `bwd_weight`,
      `optimizer`, `step_prologue`, `step_epilogue`). A fragment is a
      template: it runs once per microbatch (forward and backward kinds) or
      once per step (the others).
    - `mpmd.transfer`s: the logical data flow between fragments, one
      edge per fragment argument that another fragment produces.
    - `mpmd.rank`s: one ordered action list per rank (`mpmd.run`,
      `mpmd.send`, `mpmd.recv`, `mpmd.all_reduce`, `mpmd.broadcast`).

    Values are named, not passed as SSA operands: the value a fragment
    returns as result `i` for microbatch `k` is the *slot* `@fragment[i]`
    of microbatch `k` (once-per-step fragments have no microbatch). Actions
    name the slots they move; a rank holds a slot once it ran the producing
    fragment or received the slot.

    Communication has rendezvous semantics: a send completes only when the
    matching receive is posted. See `docs/mpmd.md` for the design.
  }];
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// `mpmd.param = @p` on a fragment argument: the argument is the value
    /// of the nn.parameter `@p`.
    static constexpr ::llvm::StringLiteral kParamAttrName = "mpmd.param";
    /// `mpmd.input = k` on a fragment argument: the argument is this
    /// microbatch's slice of step input `k`.
    static constexpr ::llvm::StringLiteral kInputAttrName = "mpmd.input";
    /// `mpmd.remote` (unit) on a fragment: the fragment is a declaration
    /// (no body) of a fragment that runs on another rank.
    static constexpr ::llvm::StringLiteral kRemoteAttrName = "mpmd.remote";
    /// `mpmd.update = @p` on a once-per-step fragment's result: the value
    /// replaces nn.parameter `@p` when the step ends (on every rank, after
    /// every action has completed).
    static constexpr ::llvm::StringLiteral kUpdateAttrName = "mpmd.update";
    /// `mpmd.output = k` on a once-per-step fragment's result: the value is
    /// result `k` of the step (the loss, or a gradient of a gradient
    /// function), reported by the runtime.
    static constexpr ::llvm::StringLiteral kOutputAttrName = "mpmd.output";
  }];
}

class MPMD_Op<string mnemonic, list<Trait> traits = []>
    : Op<MPMD_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def MPMD_FragmentKind : I32EnumAttr<"FragmentKind", "kind of fragment", [
    I32EnumAttrCase<"Fwd", 0, "fwd">,
    I32EnumAttrCase<"Bwd", 1, "bwd">,
    I32EnumAttrCase<"BwdInput", 2, "bwd_input">,
    I32EnumAttrCase<"BwdWeight", 3, "bwd_weight">,
    I32EnumAttrCase<"Optimizer", 4, "optimizer">,
    I32EnumAttrCase<"StepPrologue", 5, "step_prologue">,
    I32EnumAttrCase<"StepEpilogue", 6, "step_epilogue">
  ]> {
  let cppNamespace = "::tandem::mpmd";
  let genSpecializedAttr = 0;
}

def MPMD_ReduceKind : I32EnumAttr<"ReduceKind", "reduction of an all-reduce", [
    I32EnumAttrCase<"Sum", 0, "sum">,
    I32EnumAttrCase<"Max", 1, "max">
  ]> {
  let cppNamespace = "::tandem::mpmd";
  let genSpecializedAttr = 0;
}

#endif // TANDEM_DIALECT_MPMD_IR_MPMDBASE_TD
