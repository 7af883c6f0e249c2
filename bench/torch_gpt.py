"""torch_gpt.py: the GPU peer of Tandem's CUDA target, the GPT of `tandemc
models gpt` trained in PyTorch the way a user of PyTorch would write it.

  torch_gpt.py --config gpt2-124m --batch 8 --seq 1024 --microbatches 4
               --precision bf16 [--compile] --steps 10 --corpus FILE

The model is python/tandem_ref/gpt.py's (pre-LN blocks, tanh GELU, causal
attention, tied head, layer-norm epsilon 1e-5) with PyTorch's own modules:
nn.Linear, nn.LayerNorm, F.scaled_dot_product_attention (is_causal; PyTorch
picks its flash or cuDNN kernel) and F.cross_entropy. As in nanoGPT the
vocabulary is padded to a multiple of 64 (50257 -> 50304) in the model
itself; Tandem pads the same way and masks the padding out of the loss, so
the two do the same GEMM work. One step: `microbatches` forward and backward
passes of `batch` sequences, each loss divided by the microbatch count and
the gradients summed, then AdamW at Tandem's defaults (lr 1e-3, betas
0.9/0.999, eps 1e-8, weight decay 0.01 on matrices, no clipping) with
PyTorch's fused implementation. f32 computes in float32 with TF32 off (as
Tandem's f32 GEMMs); bf16 is autocast with float32 master weights and
optimizer state (as Tandem's --precision bf16).

Warm-up steps (--warmup, 3 by default, compilation with --compile) are not
timed; then each step is timed alone (torch.cuda.synchronize). Prints, last,
one parseable line:

  torch MODE PRECISION params P step_median S tokens/s R peak_gib G
"""

import argparse
import math
import statistics
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from gpt_configs import CONFIGS



class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(dim, eps=1e-5)
        self.c_attn = nn.Linear(dim, 3 * dim)
        self.c_proj = nn.Linear(dim, dim)
        self.ln_2 = nn.LayerNorm(dim, eps=1e-5)
        self.c_fc = nn.Linear(dim, 4 * dim)
        self.mlp_proj = nn.Linear(4 * dim, dim)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(dim, dim=2)
        split = lambda t: t.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2)  # noqa: E731
        a = F.scaled_dot_product_attention(split(q), split(k), split(v), is_causal=True)
        x = x + self.c_proj(a.transpose(1, 2).contiguous().view(batch, seq, dim))
        h = F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh")
        return x + self.mlp_proj(h)


class GPT(nn.Module):
    def __init__(self, layers, dim, heads, vocab, seq):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(seq, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(dim, eps=1e-5)
        # Tandem's initialisation: matrices and embeddings N(0, 0.02^2),
        # biases zero, layer-norm weights one.
        for name, p in self.named_parameters():
            if p.dim() == 2:
                nn.init.normal_(p, 0.0, 0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, tokens, targets):
        seq = tokens.shape[1]
        x = self.wte(tokens) + self.wpe.weight[:seq]
        for block in self.blocks:
            x = block(x)
        logits = F.linear(self.ln_f(x), self.wte.weight)  # tied head
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), targets.view(-1))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="gpt2-124m", choices=CONFIGS)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=1024)
    parser.add_argument("--microbatches", type=int, default=4)
    parser.add_argument("--precision", default="bf16", choices=["f32", "bf16"])
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--corpus", required=True)
    args = parser.parse_args()

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.manual_seed(0)
    device = torch.device("cuda")
    layers, dim, heads, vocab = CONFIGS[args.config]
    padded = math.ceil(vocab / 64) * 64
    model = GPT(layers, dim, heads, padded, args.seq).to(device)
    decay = [p for p in model.parameters() if p.dim() == 2]
    rest = [p for p in model.parameters() if p.dim() != 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": rest, "weight_decay": 0.0}],
        lr=1e-3, betas=(0.9, 0.999), eps=1e-8, fused=True)
    step_fn = torch.compile(model) if args.compile else model

    data = np.frombuffer(open(args.corpus, "rb").read(), dtype=np.uint8).astype(np.int64)
    span = args.batch * args.seq + 1
    windows = []
    for k in range(args.microbatches):
        start = (k * (span - 1)) % (len(data) - span)
        chunk = torch.from_numpy(data[start:start + span]).to(device)
        windows.append((chunk[:-1].view(args.batch, args.seq), chunk[1:].view(args.batch, args.seq)))

    autocast = torch.autocast("cuda", dtype=torch.bfloat16, enabled=args.precision == "bf16")

    def step():
        total = 0.0
        for tokens, targets in windows:
            with autocast:
                loss = step_fn(tokens, targets) / args.microbatches
            loss.backward()
            total += loss.detach()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return total

    for _ in range(args.warmup):
        step()
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    times = []
    for k in range(args.steps):
        start = time.perf_counter()
        loss = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - start)
        print(f"step {k} loss {float(loss):.6f} time {times[-1]:.4f} s", flush=True)
    median = statistics.median(times)
    tokens = args.microbatches * args.batch * args.seq
    params = sum(p.numel() for p in model.parameters())
    peak = torch.cuda.max_memory_allocated() / 2**30
    mode = "compile" if args.compile else "eager"
    print(f"torch {mode} {args.precision} params {params} step_median {median:.5f} "
          f"tokens/s {tokens / median:.0f} peak_gib {peak:.2f}")


if __name__ == "__main__":
    main()
