//===- Passes.td - the example plugin's passes -----------------*- tablegen -*-===//

#ifndef TANDEM_EXAMPLE_PLUGIN_PASSES_TD
#define TANDEM_EXAMPLE_PLUGIN_PASSES_TD

include "mlir/Pass/PassBase.td"

def ExampleParamStats : Pass<"example-param-stats", "::mlir::ModuleOp"> {
  let summary = "Counts the parameters each function reads";
  let description = [{
    For every function in the module, counts the distinct `nn.parameter`s
    it reads directly with `nn.param` (a parameter read twice, such as a
    token embedding tied to the LM head, counts once), their scalar elements
    and their bytes. Annotates the function with

      example.params          number of distinct parameters (i64)
      example.param_elements  total elements of those parameters (i64)
      example.param_bytes     total bytes of those parameters (i64)

    and, unless `remarks=false`, emits a remark at the function:
    `reads N parameters, M elements, B bytes`
    (`parameter` when N is 1). A partitioner can use these
    numbers to balance parameter memory across pipeline stages.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"true",
           "Emit a remark with the counts at every function">
  ];
  let dependentDialects = ["::tandem::nn::NNDialect"];
}

def ExampleAssignStages : Pass<"example-assign-stages", "::mlir::ModuleOp"> {
  let summary = "Assigns pipeline stages by transformer block";
  let description = [{
    A user's partitioner standing in for the `nn.stage_end` markers: in
    function `function`, every forward op (no `nn.grad`, no `nn.optimizer`)
    that reads a parameter named `<prefix><i>.<rest>` (block i, e.g.
    `h.3.attn.c_attn.weight`) gets `mpmd.stage = i / blocks-per-stage`, the
    virtual stage `mpmd-partition` then places it on; every other op
    follows its inputs there. So the embedding lands with the first blocks
    and the final norm and LM head with the last ones. Emits a remark per
    stage naming its blocks.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "the function whose forward ops are annotated">,
    Option<"prefix", "prefix", "std::string", /*default=*/"\"h.\"",
           "parameter-name prefix before the block number">,
    Option<"blocksPerStage", "blocks-per-stage", "int64_t", /*default=*/"1",
           "consecutive blocks per virtual stage (>= 1)">,
  ];
  let dependentDialects = ["::tandem::nn::NNDialect"];
}

#endif // TANDEM_EXAMPLE_PLUGIN_PASSES_TD
