// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// Diagnostics of mpmd.fragment (placement, signature, bindings) and mpmd.yield.

// stage within the grid

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected a stage in [0, 2), found 2}}
  mpmd.fragment @g stage 2 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// chunk within the grid

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected a chunk in [0, 1), found 1}}
  mpmd.fragment @g stage 0 chunk 1 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// unknown kind

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{expected a fragment kind (fwd, bwd, bwd_input, bwd_weight, optimizer, step_prologue, step_epilogue), found 'backward'}}
  mpmd.fragment @g stage 0 chunk 0 kind backward (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// static argument

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected argument 0 to be a statically shaped tensor, found 'tensor<?xf32>'}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<?xf32> {mpmd.input = 0 : i64}) {
    mpmd.yield
  }
}

// -----

// static result

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected result 0 to be a statically shaped tensor, found 'f32'}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> f32 {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// entry block arguments match the signature (count; FunctionOpInterface's check)

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op entry block must have 1 arguments to match function signature}}
  "mpmd.fragment"() <{arg_attrs = [{mpmd.input = 0 : i64}], chunk = 0 : i64, function_type = (tensor<4xf32>) -> (), kind = 0 : i32, stage = 0 : i64, sym_name = "g"}> ({
    "mpmd.yield"() : () -> ()
  }) : () -> ()
}

// -----

// entry block arguments match the signature (type; FunctionOpInterface's check)

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op type of entry block argument #0('tensor<2xf32>') must match the type of the corresponding argument in function signature('tensor<4xf32>')}}
  "mpmd.fragment"() <{arg_attrs = [{mpmd.input = 0 : i64}], chunk = 0 : i64, function_type = (tensor<4xf32>) -> (), kind = 0 : i32, stage = 0 : i64, sym_name = "g"}> ({
  ^bb0(%a: tensor<2xf32>):
    "mpmd.yield"() : () -> ()
  }) : () -> ()
}

// -----

// the body ends with mpmd.yield

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected the body to end with mpmd.yield}}
  "mpmd.fragment"() <{chunk = 0 : i64, function_type = () -> (), kind = 0 : i32, stage = 0 : i64, sym_name = "g"}> ({
    %c = nn.constant dense<0.0> : tensor<4xf32>
  }) : () -> ()
}

// -----

// yield count

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    // expected-error@+1 {{'mpmd.yield' op expected 1 values (the results of fragment @g), found 0}}
    mpmd.yield
  }
}

// -----

// yield types

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    %c = nn.constant dense<0.0> : tensor<2xf32>
    // expected-error@+1 {{'mpmd.yield' op value 0 has type 'tensor<2xf32>', expected result type 'tensor<4xf32>' of fragment @g}}
    mpmd.yield %c : tensor<2xf32>
  }
}

// -----

// parameter bindings name parameters

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0: @nope does not name an nn.parameter}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.param = @nope}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// parameter bindings match types

nn.parameter @w : tensor<8xf32> = zeros
mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0 has type 'tensor<4xf32>', expected the type of parameter @w, 'tensor<8xf32>'}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.param = @w}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// mpmd.param is a symbol

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0: 'mpmd.param' must name an nn.parameter (@name), found "w"}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.param = "w"}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// mpmd.input is an index

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0: 'mpmd.input' must be a non-negative i64 step-input index, found -1 : i64}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = -1 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// unknown mpmd argument attribute

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0: unknown mpmd argument attribute 'mpmd.stash' (expected 'mpmd.param' or 'mpmd.input')}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64, mpmd.stash}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// mpmd argument attributes only on fragments

// expected-error@+1 {{'mpmd.param' is only meaningful on mpmd.fragment arguments, found it on func.func}}
func.func @f(%x: tensor<4xf32> {mpmd.param = @w}) {
  return
}

// -----

// every argument bound

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0 is not bound (expected an mpmd.param or mpmd.input attribute or one incoming mpmd.transfer)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32>) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// bound once

nn.parameter @w : tensor<4xf32> = zeros
mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op argument 0 is bound 2 times (expected exactly one of mpmd.param, mpmd.input and an incoming mpmd.transfer)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.param = @w, mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// a declaration (no body) is only allowed for a remote fragment

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op has no body but no 'mpmd.remote' attribute (only a fragment that runs on another rank may be a declaration)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd () -> tensor<4xf32>
}

// -----

// a declaration has no arguments

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op is a declaration but has 1 arguments (expected none: a remote fragment's arguments are bound on its own rank)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> attributes {mpmd.remote}
}

// -----

// mpmd.remote only on a declaration

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op has 'mpmd.remote' but a body (expected a declaration: a remote fragment's body is compiled on its own rank)}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> attributes {mpmd.remote} {
    mpmd.yield %x : tensor<4xf32>
  }
}

// -----

// mpmd.remote is a unit attribute

mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 2 {
  // expected-error@+1 {{'mpmd.fragment' op expected 'mpmd.remote' to be a unit attribute, found 1 : i64}}
  mpmd.fragment @g stage 0 chunk 0 kind fwd () -> tensor<4xf32> attributes {mpmd.remote = 1 : i64}
}

// -----

// mpmd.update names a parameter

nn.parameter @w : tensor<4xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0: 'mpmd.update' must name an nn.parameter (@name), found 3 : i64}}
  mpmd.fragment @o stage 0 chunk 0 kind optimizer (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32> {mpmd.update = 3}) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

// mpmd.update of an unknown parameter

nn.parameter @w : tensor<4xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0: @v does not name an nn.parameter}}
  mpmd.fragment @o stage 0 chunk 0 kind optimizer (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32> {mpmd.update = @v}) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

// mpmd.update with the parameter's type

nn.parameter @w : tensor<4xf32> = zeros
nn.parameter @v : tensor<8xf32> = zeros
mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0 has type 'tensor<4xf32>', expected the type of parameter @v, 'tensor<8xf32>'}}
  mpmd.fragment @o stage 0 chunk 0 kind optimizer (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32> {mpmd.update = @v}) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

// mpmd.output is a non-negative index

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0: 'mpmd.output' must be a non-negative i64 step-output index, found -1 : i64}}
  mpmd.fragment @o stage 0 chunk 0 kind step_epilogue () -> (tensor<f32> {mpmd.output = -1 : i64}) {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
}

// -----

// unknown result attribute

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0: unknown mpmd result attribute 'mpmd.param' (expected 'mpmd.update' or 'mpmd.output')}}
  mpmd.fragment @o stage 0 chunk 0 kind step_epilogue () -> (tensor<f32> {mpmd.param = @w}) {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
}

// -----

// updates and outputs come from once-per-step fragments

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 0 carries 'mpmd.output', but a fwd fragment runs once per microbatch (expected a once-per-step fragment)}}
  mpmd.fragment @o stage 0 chunk 0 kind fwd () -> (tensor<f32> {mpmd.output = 0 : i64}) {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c : tensor<f32>
  }
}

// -----

// one update per parameter

nn.parameter @w : tensor<4xf32> = zeros
mpmd.program @p stages 2 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @o0 stage 0 chunk 0 kind optimizer (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32> {mpmd.update = @w}) {
    mpmd.yield %w : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.fragment' op result 0 updates @w, which fragment @o0 already updates (expected one update per parameter)}}
  mpmd.fragment @o1 stage 1 chunk 0 kind optimizer (%w: tensor<4xf32> {mpmd.param = @w}) -> (tensor<4xf32> {mpmd.update = @w}) {
    mpmd.yield %w : tensor<4xf32>
  }
}

// -----

// one result per output

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  // expected-error@+1 {{'mpmd.fragment' op result 1 is step output 0, which fragment @o already produces (expected one result per output)}}
  mpmd.fragment @o stage 0 chunk 0 kind step_epilogue () -> (tensor<f32> {mpmd.output = 0 : i64}, tensor<f32> {mpmd.output = 0 : i64}) {
    %c = nn.constant dense<1.0> : tensor<f32>
    mpmd.yield %c, %c : tensor<f32>, tensor<f32>
  }
}

// -----

// one microbatch type per step input

mpmd.program @p stages 1 chunks 1 replicas 1 microbatches 1 {
  mpmd.fragment @a stage 0 chunk 0 kind fwd (%x: tensor<4xf32> {mpmd.input = 0 : i64}) -> tensor<4xf32> {
    mpmd.yield %x : tensor<4xf32>
  }
  // expected-error@+1 {{'mpmd.fragment' op argument 0 is step input 0 of type 'tensor<8xf32>', but fragment @a reads it as 'tensor<4xf32>' (expected one microbatch type per step input)}}
  mpmd.fragment @b stage 0 chunk 0 kind bwd (%x: tensor<8xf32> {mpmd.input = 0 : i64}) -> tensor<8xf32> {
    mpmd.yield %x : tensor<8xf32>
  }
}
