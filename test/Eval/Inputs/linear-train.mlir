// A byte-level bigram model (embedding 256 x 8, projection 8 x 256,
// cross-entropy) with a hand-written training step, for tandem-eval --train
// tests until nn-autodiff and nn-optimizer generate one:
//   @forward       the loss
//   @forward_grad  the loss and the analytic gradients (nn.gradients)
//   @train_step    the loss and the SGD-updated parameters plus a step
//                  counter (nn.updates), following docs/training.md.
// Gradients: with p = softmax(logits) and y = one_hot(targets),
// dlogits = (p - y) / (B*T); dwout = x^T dlogits; dx = dlogits wout^T;
// dwte = one_hot(tokens)^T dx. one_hot(t)[v] = relu(1 - (t - v)^2) for
// integer t and v.
module {
  nn.parameter @wte : tensor<256x8xf32> = normal(0.5)
  nn.parameter @wout : tensor<8x256xf32> = normal(0.5)
  nn.parameter @opt.step : tensor<f32> = zeros

  func.func @forward(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>) -> tensor<f32> {
    %wte = nn.param @wte : tensor<256x8xf32>
    %wout = nn.param @wout : tensor<8x256xf32>
    %x = nn.embedding %wte, %tokens : tensor<256x8xf32>, tensor<4x8xi32> -> tensor<4x8x8xf32>
    %logits = nn.matmul %x, %wout : tensor<4x8x8xf32>, tensor<8x256xf32> -> tensor<4x8x256xf32>
    %loss = nn.cross_entropy %logits, %targets : tensor<4x8x256xf32>, tensor<4x8xi32> -> tensor<f32>
    return %loss : tensor<f32>
  }

  func.func @forward_grad(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>) -> (tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>)
      attributes {nn.gradients = [@wte, @wout]} {
    %wte = nn.param @wte : tensor<256x8xf32>
    %wout = nn.param @wout : tensor<8x256xf32>
    %x = nn.embedding %wte, %tokens : tensor<256x8xf32>, tensor<4x8xi32> -> tensor<4x8x8xf32>
    %logits = nn.matmul %x, %wout : tensor<4x8x8xf32>, tensor<8x256xf32> -> tensor<4x8x256xf32>
    %loss = nn.cross_entropy %logits, %targets : tensor<4x8x256xf32>, tensor<4x8xi32> -> tensor<f32>
    %iota = nn.constant dense<[0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 17.0, 18.0, 19.0, 20.0, 21.0, 22.0, 23.0, 24.0, 25.0, 26.0, 27.0, 28.0, 29.0, 30.0, 31.0, 32.0, 33.0, 34.0, 35.0, 36.0, 37.0, 38.0, 39.0, 40.0, 41.0, 42.0, 43.0, 44.0, 45.0, 46.0, 47.0, 48.0, 49.0, 50.0, 51.0, 52.0, 53.0, 54.0, 55.0, 56.0, 57.0, 58.0, 59.0, 60.0, 61.0, 62.0, 63.0, 64.0, 65.0, 66.0, 67.0, 68.0, 69.0, 70.0, 71.0, 72.0, 73.0, 74.0, 75.0, 76.0, 77.0, 78.0, 79.0, 80.0, 81.0, 82.0, 83.0, 84.0, 85.0, 86.0, 87.0, 88.0, 89.0, 90.0, 91.0, 92.0, 93.0, 94.0, 95.0, 96.0, 97.0, 98.0, 99.0, 100.0, 101.0, 102.0, 103.0, 104.0, 105.0, 106.0, 107.0, 108.0, 109.0, 110.0, 111.0, 112.0, 113.0, 114.0, 115.0, 116.0, 117.0, 118.0, 119.0, 120.0, 121.0, 122.0, 123.0, 124.0, 125.0, 126.0, 127.0, 128.0, 129.0, 130.0, 131.0, 132.0, 133.0, 134.0, 135.0, 136.0, 137.0, 138.0, 139.0, 140.0, 141.0, 142.0, 143.0, 144.0, 145.0, 146.0, 147.0, 148.0, 149.0, 150.0, 151.0, 152.0, 153.0, 154.0, 155.0, 156.0, 157.0, 158.0, 159.0, 160.0, 161.0, 162.0, 163.0, 164.0, 165.0, 166.0, 167.0, 168.0, 169.0, 170.0, 171.0, 172.0, 173.0, 174.0, 175.0, 176.0, 177.0, 178.0, 179.0, 180.0, 181.0, 182.0, 183.0, 184.0, 185.0, 186.0, 187.0, 188.0, 189.0, 190.0, 191.0, 192.0, 193.0, 194.0, 195.0, 196.0, 197.0, 198.0, 199.0, 200.0, 201.0, 202.0, 203.0, 204.0, 205.0, 206.0, 207.0, 208.0, 209.0, 210.0, 211.0, 212.0, 213.0, 214.0, 215.0, 216.0, 217.0, 218.0, 219.0, 220.0, 221.0, 222.0, 223.0, 224.0, 225.0, 226.0, 227.0, 228.0, 229.0, 230.0, 231.0, 232.0, 233.0, 234.0, 235.0, 236.0, 237.0, 238.0, 239.0, 240.0, 241.0, 242.0, 243.0, 244.0, 245.0, 246.0, 247.0, 248.0, 249.0, 250.0, 251.0, 252.0, 253.0, 254.0, 255.0]> : tensor<256xf32>
    %one = nn.constant dense<1.0> : tensor<1xf32>
    %inv_n = nn.constant dense<0.03125> : tensor<1xf32>
    // dlogits = (softmax(logits) - one_hot(targets)) / 32
    %p = nn.softmax %logits {axis = 2 : i64} : tensor<4x8x256xf32>
    %tf = nn.cast %targets : tensor<4x8xi32> to tensor<4x8xf32>
    %tf3 = nn.reshape %tf : tensor<4x8xf32> to tensor<4x8x1xf32>
    %td = nn.sub %tf3, %iota : tensor<4x8x1xf32>, tensor<256xf32> -> tensor<4x8x256xf32>
    %td2 = nn.mul %td, %td : tensor<4x8x256xf32>, tensor<4x8x256xf32> -> tensor<4x8x256xf32>
    %tdm = nn.sub %one, %td2 : tensor<1xf32>, tensor<4x8x256xf32> -> tensor<4x8x256xf32>
    %y = nn.relu %tdm : tensor<4x8x256xf32>
    %py = nn.sub %p, %y : tensor<4x8x256xf32>, tensor<4x8x256xf32> -> tensor<4x8x256xf32>
    %dlogits = nn.mul %py, %inv_n : tensor<4x8x256xf32>, tensor<1xf32> -> tensor<4x8x256xf32>
    // dwout = x^T dlogits
    %x2 = nn.reshape %x : tensor<4x8x8xf32> to tensor<32x8xf32>
    %dl2 = nn.reshape %dlogits : tensor<4x8x256xf32> to tensor<32x256xf32>
    %dwout = nn.matmul %x2, %dl2 {transpose_lhs} : tensor<32x8xf32>, tensor<32x256xf32> -> tensor<8x256xf32>
    // dwte = one_hot(tokens)^T (dlogits wout^T)
    %dx = nn.matmul %dl2, %wout {transpose_rhs} : tensor<32x256xf32>, tensor<8x256xf32> -> tensor<32x8xf32>
    %kf = nn.cast %tokens : tensor<4x8xi32> to tensor<4x8xf32>
    %kf2 = nn.reshape %kf : tensor<4x8xf32> to tensor<32x1xf32>
    %kd = nn.sub %kf2, %iota : tensor<32x1xf32>, tensor<256xf32> -> tensor<32x256xf32>
    %kd2 = nn.mul %kd, %kd : tensor<32x256xf32>, tensor<32x256xf32> -> tensor<32x256xf32>
    %kdm = nn.sub %one, %kd2 : tensor<1xf32>, tensor<32x256xf32> -> tensor<32x256xf32>
    %k = nn.relu %kdm : tensor<32x256xf32>
    %dwte = nn.matmul %k, %dx {transpose_lhs} : tensor<32x256xf32>, tensor<32x8xf32> -> tensor<256x8xf32>
    return %loss, %dwte, %dwout : tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>
  }

  func.func @train_step(%tokens: tensor<4x8xi32>, %targets: tensor<4x8xi32>) -> (tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>, tensor<f32>)
      attributes {nn.updates = [@wte, @wout, @opt.step]} {
    %loss, %dwte, %dwout = func.call @forward_grad(%tokens, %targets) : (tensor<4x8xi32>, tensor<4x8xi32>) -> (tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>)
    %wte = nn.param @wte : tensor<256x8xf32>
    %wout = nn.param @wout : tensor<8x256xf32>
    %step = nn.param @opt.step : tensor<f32>
    %lr = nn.constant dense<2.0> : tensor<1xf32>
    %one = nn.constant dense<1.0> : tensor<f32>
    %swte = nn.mul %dwte, %lr : tensor<256x8xf32>, tensor<1xf32> -> tensor<256x8xf32>
    %new_wte = nn.sub %wte, %swte : tensor<256x8xf32>, tensor<256x8xf32> -> tensor<256x8xf32>
    %swout = nn.mul %dwout, %lr : tensor<8x256xf32>, tensor<1xf32> -> tensor<8x256xf32>
    %new_wout = nn.sub %wout, %swout : tensor<8x256xf32>, tensor<8x256xf32> -> tensor<8x256xf32>
    %new_step = nn.add %step, %one : tensor<f32>, tensor<f32> -> tensor<f32>
    return %loss, %new_wte, %new_wout, %new_step : tensor<f32>, tensor<256x8xf32>, tensor<8x256xf32>, tensor<f32>
  }
}
