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

#endif // TANDEM_EXAMPLE_PLUGIN_PASSES_TD
