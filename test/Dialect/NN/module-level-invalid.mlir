// RUN: tandem-opt %s -split-input-file -verify-diagnostics

// nn ops that compute belong in a function (issue 17: at module level they
// were accepted and silently dropped from the rank programs).

module {
  // expected-error@+1 {{'nn.constant' op must be inside a function (func.func or an mpmd fragment), found at module level, where nothing runs it and the rank programs would drop it}}
  %c = nn.constant dense<1.000000e+00> : tensor<4xf32>
}

// -----

module {
  nn.parameter @w : tensor<4xf32> = zeros
  // expected-error@+1 {{'nn.param' op must be inside a function}}
  %w = nn.param @w : tensor<4xf32>
}

// -----

// A declaration stays at module level, and the same ops inside a function
// verify.
module {
  nn.parameter @w : tensor<4xf32> = zeros
  func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
    %w = nn.param @w : tensor<4xf32>
    %c = nn.constant dense<1.000000e+00> : tensor<4xf32>
    %s = nn.add %x, %w : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    %t = nn.stage_end %s : tensor<4xf32>
    %u = nn.mul %t, %c : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
    return %u : tensor<4xf32>
  }
}
