// Cast placement of nn-mixed-precision: parameters cast once right after
// their read, no cast of a cast, no value cast down and back up, f32-list
// ops fed f32, the override lists, the no-op f32 policy, and the loss-scale
// attribute and state.
//
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision | FileCheck %s
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision="policy=f32" | FileCheck %s --check-prefix=F32
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision="policy=bf16 low-precision-ops=nn.gelu,nn.add f32-ops=nn.matmul" | FileCheck %s --check-prefix=OVERRIDE
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision="policy=fp16" | FileCheck %s --check-prefix=FP16
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision="policy=fp16 loss-scale=static:1024" | FileCheck %s --check-prefix=STATIC
// RUN: tandem-opt %s --split-input-file --nn-mixed-precision="policy=bf16 loss-scale=dynamic:256:3" | FileCheck %s --check-prefix=DYN

nn.parameter @w : tensor<4x4xf32> = normal(0.02)
nn.parameter @b : tensor<4xf32> = zeros
nn.parameter @g : tensor<4xf32> = ones

// %x feeds a layer_norm (f32 list) and, through it, two matmuls that share
// @w: one cast of @w right after its read, one cast of the normalized input.
// The first product feeds a reshape (follows: stays bf16) and a bias add
// (the master weight @b does not widen it: bf16, @b cast once after its
// read for it while the layer_norm reads it f32), the second a gelu
// (follows: bf16) then a softmax (f32 list), and the reshape a reduce_sum
// (f32 list): each bf16 value is cast up once, however many f32 users it
// has, right after its definition; a mul of f32 and bf16 activations runs
// in f32.
//
// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32>) -> tensor<f32>
// CHECK-NOT: loss_scale
// CHECK: %[[W:.*]] = nn.param @w : tensor<4x4xf32>
// CHECK-NEXT: %[[WL:.*]] = nn.cast %[[W]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK-NEXT: %[[B:.*]] = nn.param @b : tensor<4xf32>
// CHECK-NEXT: %[[BL:.*]] = nn.cast %[[B]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[G:.*]] = nn.param @g : tensor<4xf32>
// CHECK-NEXT: %[[N:.*]] = nn.layer_norm %[[X]], %[[G]], %[[B]] {{.*}}: tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: %[[NL:.*]] = nn.cast %[[N]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK-NEXT: %[[M0:.*]] = nn.matmul %[[NL]], %[[WL]] : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[M0F:.*]] = nn.cast %[[M0]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[R:.*]] = nn.reshape %[[M0]] : tensor<2x4xbf16> to tensor<8xbf16>
// CHECK-NEXT: %[[RF:.*]] = nn.cast %[[R]] : tensor<8xbf16> to tensor<8xf32>
// CHECK-NEXT: %[[A:.*]] = nn.add %[[M0]], %[[BL]] : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[AF:.*]] = nn.cast %[[A]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[M1:.*]] = nn.matmul %[[NL]], %[[WL]] : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[GE:.*]] = nn.gelu %[[M1]] : tensor<2x4xbf16>
// CHECK-NEXT: %[[GEF:.*]] = nn.cast %[[GE]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[S:.*]] = nn.softmax %[[GEF]] {axis = 1 : i64} : tensor<2x4xf32>
// CHECK-NEXT: %[[S2:.*]] = nn.softmax %[[GEF]] {axis = 0 : i64} : tensor<2x4xf32>
// CHECK-NEXT: %[[M2:.*]] = nn.mul %[[S]], %[[M0F]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[T:.*]] = nn.mul %[[M2]], %[[AF]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[U:.*]] = nn.mul %[[T]], %[[S2]] : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
// CHECK-NEXT: %[[L:.*]] = nn.reduce_sum %[[U]] [0, 1] : tensor<2x4xf32> -> tensor<f32>
// CHECK-NEXT: %[[RS:.*]] = nn.reduce_sum %[[RF]] [0] : tensor<8xf32> -> tensor<f32>
// CHECK-NEXT: %[[LOSS:.*]] = nn.add %[[L]], %[[RS]] : tensor<f32>, tensor<f32> -> tensor<f32>
// CHECK-NEXT: return %[[LOSS]] : tensor<f32>
// No cast reads a cast.
// CHECK-NOT: nn.cast %{{.*}} : tensor<{{.*}}bf16> to tensor<{{.*}}bf16>

// The f32 policy changes nothing.
// F32-LABEL: func.func @forward(
// F32-NOT: nn.cast
// F32-NOT: bf16
// F32: return

// Overrides: matmul moved to the f32 list, gelu and add to the low list;
// the bias is cast once after its read, the matmul stays f32.
// OVERRIDE-LABEL: func.func @forward(
// OVERRIDE: %[[W:.*]] = nn.param @w : tensor<4x4xf32>
// OVERRIDE-NEXT: %[[B:.*]] = nn.param @b : tensor<4xf32>
// OVERRIDE-NEXT: %[[BL:.*]] = nn.cast %[[B]] : tensor<4xf32> to tensor<4xbf16>
// OVERRIDE: %[[M0:.*]] = nn.matmul %{{.*}}, %[[W]] : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
// OVERRIDE-NEXT: %[[M0L:.*]] = nn.cast %[[M0]] : tensor<2x4xf32> to tensor<2x4xbf16>
// OVERRIDE: nn.add %[[M0L]], %[[BL]] : tensor<2x4xbf16>, tensor<4xbf16> -> tensor<2x4xbf16>
// OVERRIDE: nn.gelu %{{.*}} : tensor<2x4xbf16>
// OVERRIDE-NOT: bf16> to tensor<{{.*}}bf16>
// OVERRIDE: return

// fp16 scales the loss dynamically by default: the state is declared after
// the last parameter, the choice recorded on the function.
// FP16: nn.parameter @g : tensor<4xf32> = ones
// FP16-NEXT: nn.parameter @opt.loss_scale : tensor<f32> = ones
// FP16-NEXT: nn.parameter @opt.good_steps : tensor<f32> = zeros
// FP16-LABEL: func.func @forward(
// FP16-SAME: attributes {nn.loss_scale = {factor = @opt.loss_scale, good_steps = @opt.good_steps, growth_interval = 2000 : i64, scale = 6.553600e+04 : f64}}
// FP16: nn.matmul %{{.*}}, %{{.*}} : tensor<2x4xf16>, tensor<4x4xf16> -> tensor<2x4xf16>

// STATIC-NOT: @opt.
// STATIC-LABEL: func.func @forward(
// STATIC-SAME: attributes {nn.loss_scale = {scale = 1.024000e+03 : f64}}

// DYN: nn.parameter @opt.loss_scale : tensor<f32> = ones
// DYN-LABEL: func.func @forward(
// DYN-SAME: attributes {nn.loss_scale = {factor = @opt.loss_scale, good_steps = @opt.good_steps, growth_interval = 3 : i64, scale = 2.560000e+02 : f64}}
// DYN: tensor<2x4xbf16>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4x4xf32>
  %b = nn.param @b : tensor<4xf32>
  %g = nn.param @g : tensor<4xf32>
  %n = nn.layer_norm %x, %g, %b {epsilon = 1.0e-5 : f64} : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>
  %m0 = nn.matmul %n, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %r = nn.reshape %m0 : tensor<2x4xf32> to tensor<8xf32>
  %a = nn.add %m0, %b : tensor<2x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %m1 = nn.matmul %n, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %ge = nn.gelu %m1 : tensor<2x4xf32>
  %s = nn.softmax %ge {axis = 1 : i64} : tensor<2x4xf32>
  %s2 = nn.softmax %ge {axis = 0 : i64} : tensor<2x4xf32>
  %m2 = nn.mul %s, %m0 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %t = nn.mul %m2, %a : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %u = nn.mul %t, %s2 : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %l = nn.reduce_sum %u [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %rs = nn.reduce_sum %r [0] : tensor<8xf32> -> tensor<f32>
  %loss = nn.add %l, %rs : tensor<f32>, tensor<f32> -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// A value the model casts itself is left alone, f64 work is the author's
// choice, and a stage marker passes each value in its own type.
nn.parameter @w : tensor<4x4xf32> = normal(0.02)

// CHECK-LABEL: func.func @forward(
// CHECK-SAME: %[[X:[^:]*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[XL:.*]] = nn.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK-NEXT: %[[W:.*]] = nn.param @w : tensor<4x4xf32>
// CHECK-NEXT: %[[WL:.*]] = nn.cast %[[W]] : tensor<4x4xf32> to tensor<4x4xbf16>
// CHECK-NEXT: %[[M:.*]] = nn.matmul %[[XL]], %[[WL]] : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xbf16>
// CHECK-NEXT: %[[E:.*]]:2 = nn.stage_end %[[M]], %[[X]] : tensor<2x4xbf16>, tensor<2x4xf32>
// CHECK-NEXT: %[[EF:.*]] = nn.cast %[[E]]#0 : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK-NEXT: %[[D:.*]] = nn.cast %[[E]]#1 : tensor<2x4xf32> to tensor<2x4xf64>
// CHECK-NEXT: %[[D2:.*]] = nn.mul %[[D]], %[[D]] : tensor<2x4xf64>, tensor<2x4xf64> -> tensor<2x4xf64>
// CHECK-NEXT: %[[DS:.*]] = nn.reduce_sum %[[D2]] [0, 1] : tensor<2x4xf64> -> tensor<f64>
// CHECK-NEXT: %[[DF:.*]] = nn.cast %[[DS]] : tensor<f64> to tensor<f32>
// CHECK-NEXT: %[[S:.*]] = nn.reduce_sum %[[EF]] [0, 1] : tensor<2x4xf32> -> tensor<f32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4x4xf32>
  %m = nn.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %e:2 = nn.stage_end %m, %x : tensor<2x4xf32>, tensor<2x4xf32>
  %d = nn.cast %e#1 : tensor<2x4xf32> to tensor<2x4xf64>
  %d2 = nn.mul %d, %d : tensor<2x4xf64>, tensor<2x4xf64> -> tensor<2x4xf64>
  %ds = nn.reduce_sum %d2 [0, 1] : tensor<2x4xf64> -> tensor<f64>
  %df = nn.cast %ds : tensor<f64> to tensor<f32>
  %s = nn.reduce_sum %e#0 [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %l = nn.add %s, %df : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Master weights seen through views: a bias reshaped and broadcast as an
// importer writes it does not widen the bf16 add (the view stays f32, the
// cast follows it), an op reading only master weights keeps f32, and a
// weight added to an f32 activation stays f32.
nn.parameter @w : tensor<4x4xf32> = normal(0.02)
nn.parameter @b : tensor<4xf32> = zeros

// CHECK-LABEL: func.func @forward(
// CHECK: %[[B:.*]] = nn.param @b : tensor<4xf32>
// CHECK-NEXT: %[[BR:.*]] = nn.reshape %[[B]] : tensor<4xf32> to tensor<1x4xf32>
// CHECK-NEXT: %[[BB:.*]] = nn.broadcast_to %[[BR]] : tensor<1x4xf32> to tensor<2x4xf32>
// CHECK-NEXT: %[[BL:.*]] = nn.cast %[[BB]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK-NEXT: %[[A:.*]] = nn.add %{{.*}}, %[[BL]] : tensor<2x4xbf16>, tensor<2x4xbf16> -> tensor<2x4xbf16>
// CHECK: %[[WB:.*]] = nn.add %{{.*}}, %[[BR]] : tensor<4x4xf32>, tensor<1x4xf32> -> tensor<4x4xf32>
// CHECK: nn.add %[[X:.*]], %[[BR]] : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
func.func @forward(%x: tensor<2x4xf32>) -> tensor<f32> {
  %w = nn.param @w : tensor<4x4xf32>
  %m = nn.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
  %b = nn.param @b : tensor<4xf32>
  %br = nn.reshape %b : tensor<4xf32> to tensor<1x4xf32>
  %bb = nn.broadcast_to %br : tensor<1x4xf32> to tensor<2x4xf32>
  %a = nn.add %m, %bb : tensor<2x4xf32>, tensor<2x4xf32> -> tensor<2x4xf32>
  %wb = nn.add %w, %br : tensor<4x4xf32>, tensor<1x4xf32> -> tensor<4x4xf32>
  %xb = nn.add %x, %br : tensor<2x4xf32>, tensor<1x4xf32> -> tensor<2x4xf32>
  %s0 = nn.reduce_sum %a [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %s1 = nn.reduce_sum %wb [0, 1] : tensor<4x4xf32> -> tensor<f32>
  %s2 = nn.reduce_sum %xb [0, 1] : tensor<2x4xf32> -> tensor<f32>
  %s01 = nn.add %s0, %s1 : tensor<f32>, tensor<f32> -> tensor<f32>
  %l = nn.add %s01, %s2 : tensor<f32>, tensor<f32> -> tensor<f32>
  return %l : tensor<f32>
}
