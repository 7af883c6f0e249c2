// A plugin that cannot be loaded is an error with a non-zero exit, before any
// input is read. (MLIR's own driver only warns, "Request ignored", and
// carries on; tandem-opt checks the plugins itself.)
// RUN: not tandem-opt %s --load-pass-plugin=%t.does-not-exist.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// RUN: not tandem-opt %s --load-pass-plugin %t.does-not-exist.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=MISSING
// MISSING: tandem-opt: error: --load-pass-plugin={{.*}}does-not-exist.so: Could not load library
// MISSING-NOT: func.func

// A library that is not a plugin (no mlirGetPassPluginInfo) is refused too.
// RUN: not tandem-opt %s --load-pass-plugin=%tandem_lib_dir/libTandem.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOTPLUGIN
// NOTPLUGIN: tandem-opt: error: --load-pass-plugin={{.*}}libTandem.so: Plugin entry point not found

// The same for dialect plugins.
// RUN: not tandem-opt %s --load-dialect-plugin=%t.does-not-exist.so 2>&1 \
// RUN:   | FileCheck %s --check-prefix=DIALECT
// DIALECT: tandem-opt: error: --load-dialect-plugin={{.*}}does-not-exist.so: Could not load library

func.func @f() {
  return
}
