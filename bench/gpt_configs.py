"""The named GPT configurations of `tandemc models gpt` (lib/Models/Config.cpp),
for the Python peers of the benchmarks (jax_throughput.py, torch_gpt.py).

name -> (layers, width, heads, vocab). Every one has a tied head and
layer-norm epsilon 1e-5; the benchmark picks the batch and sequence.
"""

CONFIGS = {
    "tiny": (8, 32, 2, 256),
    "small": (4, 256, 4, 256),
    "gpt2-124m": (12, 768, 12, 50257),
}
