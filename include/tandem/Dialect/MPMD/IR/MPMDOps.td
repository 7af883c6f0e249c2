//===- MPMDOps.td - mpmd dialect operations --------------------*- tablegen -*-===//

#ifndef TANDEM_DIALECT_MPMD_IR_MPMDOPS_TD
#define TANDEM_DIALECT_MPMD_IR_MPMDOPS_TD

include "tandem/Dialect/MPMD/IR/MPMDBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def MPMD_StaticTensor : StaticShapeTensorOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// Program structure
//===----------------------------------------------------------------------===//

def MPMD_ProgramOp : MPMD_Op<"program", [Symbol, SymbolTable,
    IsolatedFromAbove, NoTerminator, SingleBlock,
    HasParent<"::mlir::ModuleOp">]> {
  let summary = "A training step over a grid of pipeline ranks";
  let description = [{
    Holds one training step: its fragments, the transfers between them and
    (once scheduled) one action list per rank. The rank grid has
    `stages` pipeline stages, each holding `chunks` model chunks (more than
    one for interleaved schedules), and `replicas` data-parallel replicas:
    `stages * replicas` ranks in all, rank `r` running stage `r mod stages`
    of replica `r / stages`. The step processes `microbatches` microbatches.

    The body is a symbol table holding only `mpmd.fragment`,
    `mpmd.transfer` and `mpmd.rank` ops. Every fragment argument is bound
    exactly once: by an `mpmd.param` or `mpmd.input` argument attribute, or
    by one incoming `mpmd.transfer`. At most one `mpmd.rank` exists per
    rank. Parameters (`nn.parameter`) stay in the enclosing module.

    ```mlir
    mpmd.program @step stages 2 chunks 1 replicas 1 microbatches 4 {
      mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd (...) -> (...) { ... }
      mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
      mpmd.rank 0 { mpmd.run @s0.fwd microbatch 0 ... }
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       I64Attr:$stages,
                       I64Attr:$chunks,
                       I64Attr:$replicas,
                       I64Attr:$microbatches);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `stages` $stages `chunks` $chunks `replicas` $replicas
    `microbatches` $microbatches attr-dict-with-keyword $body
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "int64_t":$stages,
                   "int64_t":$chunks, "int64_t":$replicas,
                   "int64_t":$microbatches)>
  ];
  let extraClassDeclaration = [{
    /// Number of ranks in the grid: stages * replicas.
    int64_t getNumRanks() { return getStages() * getReplicas(); }
    /// The pipeline stage rank `rank` runs.
    int64_t getStageOfRank(int64_t rank) { return rank % getStages(); }
    /// The data-parallel replica rank `rank` belongs to.
    int64_t getReplicaOfRank(int64_t rank) { return rank / getStages(); }
    /// The rank running `stage` of `replica`.
    int64_t getRank(int64_t stage, int64_t replica) {
      return replica * getStages() + stage;
    }
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The enclosing program of `op`, or null.
    static ProgramOp getParentProgram(::mlir::Operation *op) {
      return op->getParentOfType<ProgramOp>();
    }
  }];
}

def MPMD_FragmentOp : MPMD_Op<"fragment", [FunctionOpInterface,
    IsolatedFromAbove, HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "A template of nn ops placed on a (stage, chunk)";
  let description = [{
    A function-like region of `nn` ops that runs on pipeline stage `stage`,
    model chunk `chunk` (`0 <= stage < stages`, `0 <= chunk < chunks` of
    the enclosing program). `kind` says what the work is:

    | kind | runs | typical content |
    |---|---|---|
    | `fwd` | once per microbatch | forward ops of the stage |
    | `bwd` | once per microbatch | backward ops (B and W together) |
    | `bwd_input` | once per microbatch | input-gradient (B) ops |
    | `bwd_weight` | once per microbatch | weight-gradient (W) ops |
    | `optimizer` | once per step | the parameter update |
    | `step_prologue` | once per step | e.g. casting parameters once |
    | `step_epilogue` | once per step | e.g. combining gradients |

    A fragment is a template: the schedule (`mpmd.run`) says which
    microbatch each execution serves. It is isolated from above and reads
    everything through its arguments; an argument carries
    `{mpmd.param = @p}` when it is the value of the `nn.parameter` `@p`, or
    `{mpmd.input = k}` when it is the microbatch's slice of step input `k`;
    other arguments arrive through an `mpmd.transfer`. A result of a
    once-per-step fragment may carry `{mpmd.update = @p}` (the new value of
    parameter `@p`, written back when the step ends) or
    `{mpmd.output = k}` (result `k` of the step, e.g. the loss); each
    parameter is updated by at most one result of the program and each
    output index is produced once. The body ends with
    `mpmd.yield`; all argument and result types are statically shaped
    tensors.

    ```mlir
    mpmd.fragment @s0.fwd stage 0 chunk 0 kind fwd
        (%x: tensor<4x8xf32> {mpmd.input = 0 : i64},
         %w: tensor<8x16xf32> {mpmd.param = @w0}) -> (tensor<4x16xf32>) {
      %h = nn.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
      mpmd.yield %h : tensor<4x16xf32>
    }
    ```

    A fragment without a body is a *declaration* of a fragment that runs on
    another rank (`mpmd-split-programs` emits them): it keeps the name,
    placement, kind and result types, which slot types and microbatch rules
    are checked against, and must have no arguments and carry the unit
    attribute `mpmd.remote`; conversely `mpmd.remote` is only allowed on a
    declaration. A declaration cannot be run (`mpmd.run`), but its slots
    can be received, sent on, reduced or broadcast and it can be the source
    of an `mpmd.transfer`.

    ```mlir
    mpmd.fragment @s1.bwd stage 1 chunk 0 kind bwd () -> (tensor<4x8xf32>)
        attributes {mpmd.remote}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       I64Attr:$stage,
                       I64Attr:$chunk,
                       EnumProp<MPMD_FragmentKind>:$kind,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region MaxSizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "::llvm::StringRef":$name, "::mlir::FunctionType":$type,
                   "int64_t":$stage, "int64_t":$chunk, "FragmentKind":$kind)>
  ];
  let extraClassDeclaration = [{
    //===------------------------------------------------------------------===//
    // FunctionOpInterface
    //===------------------------------------------------------------------===//
    /// Null for a declaration (no body).
    ::mlir::Region *getCallableRegion() {
      return isExternal() ? nullptr : &getBody();
    }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }

    /// True for the kinds that run once per microbatch (fwd, bwd,
    /// bwd_input, bwd_weight); false for once-per-step kinds.
    bool isPerMicrobatch();
    /// The parameter bound to argument `index` (`mpmd.param`), or null.
    ::mlir::FlatSymbolRefAttr getParamBinding(unsigned index);
    /// The step input bound to argument `index` (`mpmd.input`), if any.
    std::optional<int64_t> getInputBinding(unsigned index);
    /// The parameter result `index` replaces at step end (`mpmd.update`).
    ::mlir::FlatSymbolRefAttr getUpdateBinding(unsigned index);
    /// The step output result `index` is (`mpmd.output`).
    std::optional<int64_t> getOutputBinding(unsigned index);
  }];
}

def MPMD_YieldOp : MPMD_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"FragmentOp">]> {
  let summary = "Returns a fragment's results";
  let description = [{
    Ends an `mpmd.fragment`; its operand types equal the fragment's result
    types.

    ```mlir
    mpmd.yield %h, %g : tensor<4x16xf32>, tensor<16xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let hasVerifier = 1;
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
}

def MPMD_TransferOp : MPMD_Op<"transfer", [HasParent<"ProgramOp">,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "Logical data flow from a fragment result to an argument";
  let description = [{
    Result `result` of fragment `src` becomes argument `arg` of fragment
    `dst`. Both types equal `type`. This is the logical edge the
    partitioner emits; `mpmd-lower-transfers` turns it into explicit
    `mpmd.send`/`mpmd.recv` pairs when the fragments run on different ranks
    (between fragments of the same stage the value stays where it is).

    Which executions are connected follows from the fragments' kinds:

    - per-microbatch to per-microbatch: microbatch `k` of `src` feeds
      microbatch `k` of `dst`;
    - once-per-step to per-microbatch: the one value feeds every microbatch;
    - per-microbatch to once-per-step: the microbatches' values are summed
      in increasing microbatch order (gradient accumulation);
    - once-per-step to once-per-step: the one value feeds the one run.

    ```mlir
    mpmd.transfer @s0.fwd[0] -> @s1.fwd[0] : tensor<4x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$src, I64Attr:$result,
                       FlatSymbolRefAttr:$dst, I64Attr:$arg,
                       TypeAttrOf<MPMD_StaticTensor>:$type);
  let assemblyFormat = [{
    $src `[` $result `]` `->` $dst `[` $arg `]` attr-dict `:` $type
  }];
  let hasVerifier = 1;
}

def MPMD_RankOp : MPMD_Op<"rank", [HasParent<"ProgramOp">, NoTerminator,
    SingleBlock]> {
  let summary = "The ordered action list of one rank";
  let description = [{
    The actions rank `rank` performs in one step, in order: `mpmd.run`,
    `mpmd.send`, `mpmd.recv`, `mpmd.all_reduce` and `mpmd.broadcast`.
    `0 <= rank < stages * replicas`. The schedule (`mpmd-schedule`) emits
    these lists; a user may write them by hand.

    ```mlir
    mpmd.rank 0 {
      mpmd.run @s0.fwd microbatch 0
      mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xf32> wire f32
    }
    ```
  }];
  let arguments = (ins I64Attr:$rank);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$rank attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "int64_t":$rank)>];
  let extraClassDeclaration = [{
    ::mlir::Block &getBodyBlock() { return getBody().front(); }
    /// The rank whose action list holds `op`, or std::nullopt.
    static std::optional<int64_t> getOwnRank(::mlir::Operation *op);
  }];
}

//===----------------------------------------------------------------------===//
// Actions
//===----------------------------------------------------------------------===//

class MPMD_ActionOp<string mnemonic, list<Trait> traits = []>
    : MPMD_Op<mnemonic, !listconcat([HasParent<"RankOp">,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>], traits)>;

def MPMD_RunOp : MPMD_ActionOp<"run"> {
  let summary = "Runs a fragment for one microbatch (or once per step)";
  let description = [{
    Runs fragment `fragment` on this rank. A per-microbatch fragment
    (`fwd`, `bwd`, `bwd_input`, `bwd_weight`) names the microbatch it
    serves (`0 <= microbatch < microbatches`); a once-per-step fragment
    names none. The fragment must be placed on this rank's stage. Its
    arguments are the slots its bindings name; its results become the slots
    `@fragment[i]` of that microbatch.

    ```mlir
    mpmd.run @s0.fwd microbatch 1
    mpmd.run @s0.opt
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$fragment,
                       OptionalAttr<I64Attr>:$microbatch);
  let assemblyFormat = [{
    $fragment (`microbatch` $microbatch^)? attr-dict
  }];
}

def MPMD_SendOp : MPMD_ActionOp<"send"> {
  let summary = "Sends a value slot to another rank";
  let description = [{
    Sends slot `@fragment[result]` (of microbatch `microbatch`, if the
    producer runs per microbatch) to rank `peer` on channel `channel`. The
    value has the static type `type` (equal to the producer's result type)
    and travels as it is: `wire`, the element type on the wire, must be
    the tensor's element type. A narrower edge is a cast in the program
    (`nn.cast`, or `nn.quantize` with its scales, which
    `mpmd-compress-transfers` writes), so the slots themselves are narrow.
    `peer` is another rank of the grid.

    Rendezvous semantics: the send completes only when `peer` posts the
    matching `mpmd.recv`, which names the same slot, this rank and the
    same channel. Messages between two ranks on one channel match in order.

    ```mlir
    mpmd.send @s0.fwd[0] microbatch 0 to 1 channel 0 : tensor<4x16xbf16> wire bf16
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$fragment, I64Attr:$result,
                       OptionalAttr<I64Attr>:$microbatch, I64Attr:$peer,
                       I64Attr:$channel, TypeAttrOf<MPMD_StaticTensor>:$type,
                       TypeAttr:$wire);
  let assemblyFormat = [{
    $fragment `[` $result `]` (`microbatch` $microbatch^)? `to` $peer
    `channel` $channel attr-dict `:` $type `wire` $wire
  }];
  let hasVerifier = 1;
}

def MPMD_RecvOp : MPMD_ActionOp<"recv"> {
  let summary = "Receives a value slot from another rank";
  let description = [{
    Receives slot `@fragment[result]` (of microbatch `microbatch`, if the
    producer runs per microbatch) from rank `peer` on channel `channel`;
    afterwards this rank holds the slot with static type `type` (equal to
    the producer's result type). `wire` is the element type on the wire,
    the tensor's own. See `mpmd.send` for the semantics.

    ```mlir
    mpmd.recv @s0.fwd[0] microbatch 0 from 0 channel 0 : tensor<4x16xbf16> wire bf16
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$fragment, I64Attr:$result,
                       OptionalAttr<I64Attr>:$microbatch, I64Attr:$peer,
                       I64Attr:$channel, TypeAttrOf<MPMD_StaticTensor>:$type,
                       TypeAttr:$wire);
  let assemblyFormat = [{
    $fragment `[` $result `]` (`microbatch` $microbatch^)? `from` $peer
    `channel` $channel attr-dict `:` $type `wire` $wire
  }];
  let hasVerifier = 1;
}

def MPMD_AllReduceOp : MPMD_ActionOp<"all_reduce"> {
  let summary = "Reduces a value slot over a group of ranks";
  let description = [{
    Every rank of `group` contributes its slot `@fragment[result]` (of
    `microbatch`, for per-microbatch producers; each member names its own
    contribution's slot, all of type `type`) and afterwards holds the
    reduction in that slot. The reduction runs in the fixed order of
    `group`: `((x[g0] op x[g1]) op x[g2]) ...`, so every member gets
    bitwise the same result and a pipelined run can reproduce a one-stage
    run's sums. `group` lists at least two distinct ranks of the grid,
    including this one; every member enters its collectives in the same
    order.

    ```mlir
    mpmd.all_reduce sum @s1.norm[0] group [0, 1] : tensor<f32>
    ```
  }];
  let arguments = (ins EnumProp<MPMD_ReduceKind>:$reduction,
                       FlatSymbolRefAttr:$fragment, I64Attr:$result,
                       OptionalAttr<I64Attr>:$microbatch,
                       DenseI64ArrayAttr:$group,
                       TypeAttrOf<MPMD_StaticTensor>:$type);
  let assemblyFormat = [{
    $reduction $fragment `[` $result `]` (`microbatch` $microbatch^)?
    `group` $group attr-dict `:` $type
  }];
  let hasVerifier = 1;
}

def MPMD_BroadcastOp : MPMD_ActionOp<"broadcast"> {
  let summary = "Copies a value slot from one rank to a group of ranks";
  let description = [{
    Rank `root` sends its slot `@fragment[result]` (of `microbatch`, for
    per-microbatch producers) to every other rank of `group`; afterwards
    every member holds the slot. `root` is a member of `group`, which lists
    at least two distinct ranks of the grid, including this one. Used for
    values computed once and needed on several stages (a tied weight, an
    fp16 overflow decision).

    ```mlir
    mpmd.broadcast @s0.prologue[0] root 0 group [0, 1] : tensor<64x16xf32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$fragment, I64Attr:$result,
                       OptionalAttr<I64Attr>:$microbatch, I64Attr:$root,
                       DenseI64ArrayAttr:$group,
                       TypeAttrOf<MPMD_StaticTensor>:$type);
  let assemblyFormat = [{
    $fragment `[` $result `]` (`microbatch` $microbatch^)? `root` $root
    `group` $group attr-dict `:` $type
  }];
  let hasVerifier = 1;
}

#endif // TANDEM_DIALECT_MPMD_IR_MPMDOPS_TD
