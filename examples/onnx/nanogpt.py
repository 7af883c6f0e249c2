"""A nanoGPT-style GPT-2 in PyTorch whose forward returns its loss, and the
script that exported examples/onnx/nanogpt.onnx from it.

    python examples/onnx/nanogpt.py --out examples/onnx
    python examples/onnx/nanogpt.py --out examples/onnx --opset 23

write nanogpt.onnx (the forward pass and the loss, exported by
torch.onnx.export's default, dynamo-based exporter; attention through
F.scaled_dot_product_attention, which opset 18 spells as MatMul, Softmax
and the mask), nanogpt-masked.onnx (the same model with nanoGPT's
explicit causal mask instead), then nanogpt-opset23.onnx (the first at
opset 23, where the exporter writes each F.scaled_dot_product_attention
as one Attention node, which from_onnx imports as the fused nn.attention)
and nanogpt-gqa.onnx (opset 23, 4 query heads on 2 key and value heads
through SDPA's enable_gqa: nn.attention's kv_heads) and, for each,
<name>.parameters.json: the module's named_parameters() (the trainable
set), which of them PyTorch ties (the token embedding and the head), the
torch, exporter and opset versions used, and an example batch with the
loss PyTorch computed on it. tandem.from_onnx reads the first two:

    model = tandem.from_onnx("examples/onnx/nanogpt.onnx")

The committed files were made with torch 2.15.0 (the PyPI wheel),
onnxscript 0.7.2 and opsets 18 and 23; torch is not one of the project's pins
(nothing else needs it), so run this in an environment of your own with
those versions.
"""

import argparse
import json
import math
import pathlib
from dataclasses import asdict, dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int = 128  # byte-level ASCII text
    block: int = 16
    layers: int = 2
    heads: int = 2
    embd: int = 32
    batch: int = 2
    # nanoGPT's two attention paths: F.scaled_dot_product_attention (its
    # "flash" path) or the explicit causal mask.
    flash: bool = True
    # Key and value heads (None: as many as query heads). Fewer is
    # grouped-query attention, SDPA's enable_gqa (flash path only).
    kv_heads: int | None = None


class Attention(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.heads = c.heads
        self.kv_heads = c.kv_heads or c.heads
        self.kv_dim = c.embd // c.heads * self.kv_heads
        self.c_attn = nn.Linear(c.embd, c.embd + 2 * self.kv_dim)
        self.c_proj = nn.Linear(c.embd, c.embd)
        self.flash = c.flash

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.c_attn(x).split([d, self.kv_dim, self.kv_dim], dim=2)
        q = q.view(b, t, self.heads, d // self.heads).transpose(1, 2)
        k, v = (z.view(b, t, self.kv_heads, d // self.heads).transpose(1, 2) for z in (k, v))
        if self.flash:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               enable_gqa=self.kv_heads != self.heads)
        else:
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(d // self.heads))
            mask = torch.tril(torch.ones(t, t, dtype=torch.bool, device=x.device))
            att = att.masked_fill(~mask, float("-inf")).softmax(dim=-1)
            y = att @ v
        return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))


class Block(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.ln_1 = nn.LayerNorm(c.embd)
        self.attn = Attention(c)
        self.ln_2 = nn.LayerNorm(c.embd)
        self.c_fc = nn.Linear(c.embd, 4 * c.embd)
        self.c_proj = nn.Linear(4 * c.embd, c.embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.wte = nn.Embedding(c.vocab, c.embd)
        self.wpe = nn.Embedding(c.block, c.embd)
        self.h = nn.ModuleList(Block(c) for _ in range(c.layers))
        self.ln_f = nn.LayerNorm(c.embd)
        self.lm_head = nn.Linear(c.embd, c.vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2
        for name, p in self.named_parameters():
            if name.endswith("weight") and p.dim() == 2:
                nn.init.normal_(p, std=0.02)
            elif name.endswith("bias"):
                nn.init.zeros_(p)

    def forward(self, idx, targets):
        t = idx.shape[1]
        x = self.wte(idx) + self.wpe(torch.arange(t, device=idx.device))
        for block in self.h:
            x = block(x)
        logits = self.lm_head(self.ln_f(x))
        return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))


def export(out, config=Config(), name="nanogpt", opset=18, seed=0):
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)
    model = GPT(config).eval()
    idx = torch.randint(0, config.vocab, (config.batch, config.block))
    targets = torch.randint(0, config.vocab, (config.batch, config.block))
    # optimize=False: the exporter's graph optimizer folds what it sees as
    # constants, parameters included (wpe[arange] becomes one constant, each
    # Linear's transposed weight a new initializer), and merges
    # initializers of equal value (every LayerNorm's ones): fine for
    # inference, wrong for training.
    program = torch.onnx.export(
        model, (idx, targets), dynamo=True, optimize=False, opset_version=opset, input_names=["idx", "targets"]
    )
    program.save(str(out / f"{name}.onnx"))
    # named_parameters() lists a tied tensor once; with remove_duplicate=False
    # it lists every name, which says who shares it.
    first = {}
    ties = {}
    for parameter, p in model.named_parameters(remove_duplicate=False):
        if id(p) in first:
            ties[parameter] = first[id(p)]
        else:
            first[id(p)] = parameter
    import onnxscript

    (out / f"{name}.parameters.json").write_text(
        json.dumps(
            {
                "trainable": [parameter for parameter, _ in model.named_parameters()],
                "ties": ties,
                "config": asdict(config),
                "torch": torch.__version__,
                "exporter": f"torch.onnx.export(dynamo=True), onnxscript {onnxscript.__version__}",
                "opset": opset,
                "example": {"idx": idx.tolist(), "targets": targets.tolist()},
                "loss_on_example": float(model(idx, targets).detach()),
            },
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(pathlib.Path(__file__).parent))
    parser.add_argument("--opset", type=int, default=18)
    args = parser.parse_args()
    if args.opset == 18:
        export(args.out, opset=args.opset)
        export(args.out, Config(flash=False), name="nanogpt-masked", opset=args.opset)
    else:
        # The masked model has no scaled_dot_product_attention to export as
        # Attention: only the first one differs at a later opset, and a
        # grouped-query one joins it.
        export(args.out, name=f"nanogpt-opset{args.opset}", opset=args.opset)
        export(args.out, Config(heads=4, kv_heads=2), name="nanogpt-gqa", opset=args.opset)
