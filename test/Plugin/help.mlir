// tandem-opt accepts pass and dialect plugins and registers Tandem's passes;
// without a plugin, the example plugin's pass is unknown.
// RUN: tandem-opt --help | FileCheck %s
// RUN: tandem-opt --help | FileCheck %s --check-prefix=NOPLUGIN

// CHECK-DAG: --load-pass-plugin=<string> {{ *}}- Load passes from plugin library
// CHECK-DAG: --load-dialect-plugin=<string> {{ *}}- Load dialects from plugin library
// CHECK-DAG: --nn-decompose-attention {{ *}}- Rewrites nn.attention into matmuls, a softmax and reshapes

// NOPLUGIN-NOT: example-param-stats
