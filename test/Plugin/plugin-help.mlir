// REQUIRES: plugin
// A loaded plugin's passes are listed, with their options, next to
// Tandem's own.
// RUN: tandem-opt --load-pass-plugin=%tandem_plugin --help | FileCheck %s

// CHECK-DAG: --example-param-stats {{ *}}- Counts the parameters each function reads
// CHECK-DAG: --remarks {{ *}}- Emit a remark with the counts at every function
// CHECK-DAG: --nn-decompose-attention
