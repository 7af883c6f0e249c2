"""The MLP classifier of `tandemc models mlp`, by hand.

Parameters: fc.<i>.weight [in, dim], fc.<i>.bias [dim] for the hidden
layers i = 0..L-1, then head.weight [dim, classes], head.bias [classes].
Every hidden layer is gelu(x @ W + b) (tanh GELU); the head is linear; the
loss is the mean cross-entropy over the batch.
"""

from .losses import cross_entropy, gelu_tanh


def hidden_layers(params):
    """The number of fc.<i> layers in `params`."""
    count = 0
    while f"fc.{count}.weight" in params:
        count += 1
    return count


def mlp_logits(params, x):
    h = x
    for i in range(hidden_layers(params)):
        h = gelu_tanh(h @ params[f"fc.{i}.weight"] + params[f"fc.{i}.bias"])
    return h @ params["head.weight"] + params["head.bias"]


def mlp_loss(params, x, labels):
    return cross_entropy(mlp_logits(params, x), labels)
