// A plugin that cannot be loaded is reported, and a pipeline naming one of
// its passes fails. (mlir-opt's driver only warns about the load itself:
// "Request ignored".)
// RUN: not tandem-opt %s --load-pass-plugin=%t.does-not-exist.so \
// RUN:   --pass-pipeline='builtin.module(example-param-stats)' 2>&1 \
// RUN:   | FileCheck %s

// A library that is not a plugin (no mlirGetPassPluginInfo) is refused too.
// RUN: not tandem-opt %s --load-pass-plugin=%tandem_lib_dir/libTandem.so \
// RUN:   --pass-pipeline='builtin.module(example-param-stats)' 2>&1 \
// RUN:   | FileCheck %s

// CHECK: Failed to load passes from '{{.*}}'
// CHECK: 'example-param-stats' does not refer to a registered pass or pass pipeline

func.func @f() {
  return
}
