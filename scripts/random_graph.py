#!/usr/bin/env python3
"""random_graph.py SEED [-o FILE] [--print-config]: a random valid nn model
(docs/testing.md, "Differential tests"), the same for the same seed.

A token model over byte data (vocabulary 256): an embedding, optionally
learned positions, a stack of 2 to 7 random blocks (residual MLPs with a
random activation and hidden width, gated MLPs, causal attention with a
random head count and key and value heads, plain linear layers that change the width, norms,
softmax mixing), each optionally pre-normed by layer_norm or rms_norm, a
head and the cross-entropy loss; nn.stage_end markers after random blocks
cut it into K >= 2 segments. Parameter shapes, initial scales and the batch
(B, T) are random too.

--print-config prints, instead of the model, one line of what a compile of
it may use: `segments=K batch=B stages=S microbatches=M schedule=NAME
optimizer=NAME,OPTION=VALUE,... precision=P`, S in [2, K], M a divisor of B, drawn from the
same seed, so a test compiles the model at S = 1 and at S stages with the
same microbatching and compares the runs bitwise.
"""
import argparse
import random
import sys

VOCAB = 256


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.params = []
        self.lines = []
        self.next = 0

    def value(self):
        name = "%%%d" % self.next
        self.next += 1
        return name

    def param(self, name, shape, init):
        self.params.append("  nn.parameter @%s : %s = %s" % (name, ty(shape), init))
        v = self.value()
        self.lines.append("    %s = nn.param @%s : %s" % (v, name, ty(shape)))
        return v

    def op(self, text):
        v = self.value()
        self.lines.append("    %s = %s" % (v, text))
        return v

    def weight(self, name, rows, cols):
        scale = self.rng.choice([0.02, 0.05, 0.1, 0.2]) / max(1.0, (rows / 16.0) ** 0.5)
        return self.param(name, [rows, cols], "normal(%e)" % scale)

    def linear(self, name, x, shape, width, bias):
        w = self.weight(name + ".weight", shape[-1], width)
        out = shape[:-1] + [width]
        y = self.op("nn.matmul %s, %s : %s, %s -> %s" % (x, w, ty(shape), ty([shape[-1], width]), ty(out)))
        if bias:
            b = self.param(name + ".bias", [width], "zeros")
            y = self.op("nn.add %s, %s : %s, %s -> %s" % (y, b, ty(out), ty([width]), ty(out)))
        return y, out

    def norm(self, name, x, shape, kind):
        d = shape[-1]
        w = self.param(name + ".weight", [d], "ones")
        if kind == "layer_norm":
            b = self.param(name + ".bias", [d], "zeros")
            return self.op("nn.layer_norm %s, %s, %s {epsilon = 1.000000e-05 : f64} : %s, %s, %s"
                           % (x, w, b, ty(shape), ty([d]), ty([d])))
        return self.op("nn.rms_norm %s, %s {epsilon = 1.000000e-06 : f64} : %s, %s" % (x, w, ty(shape), ty([d])))

    def act(self, x, shape, kind):
        return self.op("nn.%s %s : %s" % (kind, x, ty(shape)))

    def add(self, a, b, shape):
        return self.op("nn.add %s, %s : %s, %s -> %s" % (a, b, ty(shape), ty(shape), ty(shape)))


def ty(shape, dtype="f32"):
    return "tensor<%s>" % "x".join([str(d) for d in shape] + [dtype])


def generate(seed):
    rng = random.Random(seed)
    # Choices added later draw from their own generator, so that every seed
    # keeps the model and configuration it had before them.
    later = random.Random(seed + 0x9E3779B9)
    batch = rng.choice([2, 4, 8])
    seq = rng.choice([4, 8, 16])
    width = rng.choice([8, 16, 24, 32])
    g = Builder(rng)
    ids, targets = "%arg0", "%arg1"
    shape = [batch, seq, width]
    table = g.param("wte", [VOCAB, width], "normal(%e)" % rng.choice([0.02, 0.1]))
    x = g.op("nn.embedding %s, %s : %s, %s -> %s" % (table, ids, ty([VOCAB, width]), ty([batch, seq], "i32"), ty(shape)))
    if rng.random() < 0.5:
        pos = g.param("wpe", [seq, width], "normal(2.000000e-02)")
        x = g.op("nn.add %s, %s : %s, %s -> %s" % (x, pos, ty(shape), ty([seq, width]), ty(shape)))
    blocks = rng.randint(2, 7)
    # Markers after a random subset of blocks (not the last): K segments.
    cuts = sorted(rng.sample(range(blocks - 1), rng.randint(1, blocks - 1)))
    acts = ["gelu", "relu", "tanh", "silu"]
    for i in range(blocks):
        name = "b%d" % i
        kind = rng.choice(["mlp", "gated", "attention", "linear", "norm", "softmax"])
        pre = rng.choice([None, "layer_norm", "rms_norm"])
        d = shape[-1]
        h = g.norm(name + ".norm", x, shape, pre) if pre else x
        if kind == "mlp":
            hidden = d * rng.choice([1, 2, 4])
            u, ushape = g.linear(name + ".fc", h, shape, hidden, rng.random() < 0.7)
            u = g.act(u, ushape, rng.choice(acts))
            y, _ = g.linear(name + ".proj", u, ushape, d, rng.random() < 0.7)
            x = g.add(x, y, shape)
        elif kind == "gated":
            hidden = d * rng.choice([1, 2])
            a, ashape = g.linear(name + ".gate", h, shape, hidden, False)
            a = g.act(a, ashape, rng.choice(acts))
            b, _ = g.linear(name + ".up", h, shape, hidden, False)
            m = g.op("nn.mul %s, %s : %s, %s -> %s" % (a, b, ty(ashape), ty(ashape), ty(ashape)))
            y, _ = g.linear(name + ".down", m, ashape, d, False)
            x = g.add(x, y, shape)
        elif kind == "attention":
            heads = rng.choice([h for h in (1, 2, 4) if d % h == 0 and d // h >= 4])
            # Grouped-query attention: key and value of kv heads.
            kv = later.choice([k for k in (1, 2, 4) if heads % k == 0])
            kd = d // heads * kv
            kshape = shape[:2] + [kd]
            qkv, qshape = g.linear(name + ".qkv", h, shape, d + 2 * kd, rng.random() < 0.5)
            parts = g.value()
            g.lines.append("    %s:3 = nn.split %s {axis = 2 : i64, sizes = array<i64: %d, %d, %d>} : %s -> %s, %s, %s"
                           % (parts, qkv, d, kd, kd, ty(qshape), ty(shape), ty(kshape), ty(kshape)))
            grouped = ", kv_heads = %d : i64" % kv if kv != heads else ""
            a = g.op("nn.attention %s#0, %s#1, %s#2 {causal, heads = %d : i64%s} : %s, %s, %s -> %s"
                     % (parts, parts, parts, heads, grouped, ty(shape), ty(kshape), ty(kshape), ty(shape)))
            y, _ = g.linear(name + ".out", a, shape, d, rng.random() < 0.5)
            x = g.add(x, y, shape)
        elif kind == "linear":
            out = rng.choice([8, 16, 24, 32])
            x, shape = g.linear(name + ".fc", h, shape, out, rng.random() < 0.7)
            x = g.act(x, shape, rng.choice(acts))
        elif kind == "norm":
            x = g.norm(name + ".norm2", h, shape, rng.choice(["layer_norm", "rms_norm"]))
        else:
            s = g.op("nn.softmax %s {axis = %d : i64} : %s" % (h, len(shape) - 1, ty(shape)))
            x = g.op("nn.mul %s, %s : %s, %s -> %s" % (s, x, ty(shape), ty(shape), ty(shape)))
        if i in cuts:
            x = g.op("nn.stage_end %s : %s" % (x, ty(shape)))
    if rng.random() < 0.5:
        x = g.norm("ln_f", x, shape, rng.choice(["layer_norm", "rms_norm"]))
    logits, lshape = g.linear("head", x, shape, VOCAB, rng.random() < 0.5)
    loss = g.op("nn.cross_entropy %s, %s : %s, %s -> tensor<f32>" % (logits, targets, ty(lshape), ty([batch, seq], "i32")))
    g.lines.append("    return %s : tensor<f32>" % loss)
    text = ["// Generated by: scripts/random_graph.py %d" % seed, "module {"]
    text += g.params
    text.append("  func.func @forward(%%arg0: %s, %%arg1: %s) -> tensor<f32> {"
                % (ty([batch, seq], "i32"), ty([batch, seq], "i32")))
    text += g.lines
    text += ["  }", "}"]

    segments = len(cuts) + 1
    stages = rng.randint(2, segments)
    microbatches = rng.choice([m for m in (1, 2, 4, 8) if batch % m == 0])
    schedule = rng.choice(["gpipe", "1f1b", "zb-h1"])
    optimizer = rng.choice(["sgd,lr=0.05", "momentum,lr=0.05,momentum=0.9", "adamw,lr=0.003",
                            "adamw,lr=0.003,clip-norm=1.0"])
    precision = rng.choice(["f32", "f32", "bf16"])
    config = "segments=%d batch=%d stages=%d microbatches=%d schedule=%s optimizer=%s precision=%s" % (
        segments, batch, stages, microbatches, schedule, optimizer, precision)
    return "\n".join(text) + "\n", config


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("seed", type=int)
    parser.add_argument("-o", dest="output")
    parser.add_argument("--print-config", action="store_true")
    args = parser.parse_args()
    model, config = generate(args.seed)
    text = config + "\n" if args.print_config else model
    if args.output:
        open(args.output, "w").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
