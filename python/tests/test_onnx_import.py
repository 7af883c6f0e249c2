"""tandem.from_onnx: the nanoGPT-style GPT-2 that PyTorch exported
(examples/onnx/nanogpt.onnx, made by examples/onnx/nanogpt.py) and graphs
built with onnx's helpers, imported; the forward loss against
onnxruntime's on the same parameters and inputs within
tolerance.chain_bound's bound (any f32 implementation: onnxruntime computes
every op in f32, as XLA does); the GPT trained as a 2-stage pipeline with
falling loss, its tied head one parameter; and the diagnostics."""

import json

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness
import tandem
import tandem_ref
import tolerance

NANOGPT = harness.SOURCE_DIR / "examples" / "onnx" / "nanogpt.onnx"
# The same module with nanoGPT's explicit causal mask (Trilu, Not, Where)
# instead of F.scaled_dot_product_attention.
MASKED = NANOGPT.with_name("nanogpt-masked.onnx")
# The first exported at opset 23: each F.scaled_dot_product_attention is one
# Attention node, imported as the fused nn.attention.
OPSET23 = NANOGPT.with_name("nanogpt-opset23.onnx")
# Grouped-query attention, 4 query heads on 2 key and value heads
# (F.scaled_dot_product_attention's enable_gqa), exported at opset 23.
GQA = NANOGPT.with_name("nanogpt-gqa.onnx")


def _evaluate(tmp_path, model):
    """Tandem's loss on the model's initial values, and the inputs used."""
    source, init = model.save(tmp_path)
    outputs, inputs = tmp_path / "outputs.safetensors", tmp_path / "inputs.safetensors"
    harness.run("tandem-eval", source, "--function", "forward", "--params", init,
                "--save-outputs", outputs, "--save-inputs", inputs)
    fed = tandem_ref.load_params(inputs)
    return float(tandem_ref.load_params(outputs)["result.0"]), [fed[f"input.{i}"] for i in range(len(model.inputs))]


def _onnxruntime_loss(proto, inputs):
    session = onnxruntime.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    (loss,) = session.run(None, {n: np.asarray(v, dtype=np.int64 if v.dtype.kind == "i" else v.dtype)
                                 for n, v in zip(names, inputs)})
    return float(loss)


def _check_loss(tmp_path, model, proto):
    got, inputs = _evaluate(tmp_path, model)
    expected = _onnxruntime_loss(proto, inputs)
    bound = tolerance.chain_bound(model.text, "forward", "jax")
    print(f"tandem {got!r} onnxruntime {expected!r} relative {abs(got - expected) / abs(expected):.2e} bound {bound:.2e}")
    assert abs(got - expected) <= bound * abs(expected), (got, expected, bound)
    return got


@pytest.mark.parametrize("path", [NANOGPT, MASKED, OPSET23, GQA], ids=["sdpa", "masked", "sdpa-opset23", "gqa"])
def test_nanogpt_from_pytorch_matches_onnxruntime(path, tmp_path):
    described = json.loads(path.with_name(path.stem + ".parameters.json").read_text())
    model = tandem.from_onnx(path)
    # Opset 18 spells attention out (MatMul, Softmax, the mask); opset 23's
    # Attention node is one fused nn.attention per layer, with kv_heads
    # where the module has fewer key and value heads.
    config = described["config"]
    fused = model.text.count("nn.attention ")
    assert fused == (config["layers"] if described["opset"] >= 23 else 0), fused
    grouped = model.text.count(f"kv_heads = {config['kv_heads']} : i64")
    assert grouped == (config["layers"] if config["kv_heads"] else 0), grouped
    # The trainable set is named_parameters(); the head PyTorch ties to the
    # embedding (the exporter named the shared initializer lm_head.weight)
    # is the one parameter wte.weight, read by the embedding and the head.
    assert sorted(model.parameter_names) == sorted(described["trainable"])
    assert described["ties"] == {"lm_head.weight": "wte.weight"}
    assert "lm_head" not in model.text and model.text.count("nn.param @wte.weight ") == 2
    # Every op carries the PyTorch source line the exporter recorded.
    assert 'loc("' in model.text and "nanogpt.py" in model.text
    proto = onnx.load(str(path))
    _check_loss(tmp_path, model, proto)
    # The exported graph is PyTorch's model: onnxruntime's loss on the
    # export's example batch is the one PyTorch computed (both in f32, so
    # each within the bound of the evaluator's).
    example = described["example"]
    batch = [np.asarray(example["idx"], np.int64), np.asarray(example["targets"], np.int64)]
    bound = 2 * tolerance.chain_bound(model.text, "forward", "jax")
    torch_loss = described["loss_on_example"]
    assert abs(_onnxruntime_loss(proto, batch) - torch_loss) <= bound * torch_loss


def test_nanogpt_trains_as_a_pipeline(corpus, tmp_path):
    # A stage ends after each block: the PyTorch module names.
    model = tandem.from_onnx(NANOGPT, stage_ends=["h.0", "h.1"])
    assert model.text.count("nn.stage_end") == 2
    pipeline = tandem.compile(model, stages=2, microbatches=2, schedule="1f1b",
                              optimizer="optimizer=adamw lr=0.01", out=tmp_path / "out")
    history = pipeline.train(data=corpus, steps=10, progress=False)
    losses = [row["loss"] for row in history]
    assert len(losses) == 10 and all(np.isfinite(losses))
    assert np.mean(losses[-3:]) < np.mean(losses[:3]), losses
    trained = pipeline.parameters()
    assert sorted(trained) == sorted(model.parameter_names)
    assert not np.array_equal(trained["wte.weight"], model.initial["wte.weight"])


@pytest.mark.parametrize("path", [OPSET23, GQA], ids=["sdpa-opset23", "gqa"])
def test_nanogpt_opset23_trains_with_fused_attention_in_cuda_emulation(path, corpus, tmp_path):
    """The opset-23 exports (one Attention node a layer; grouped-query in
    the second) compiled for the cuda target in emulation (tandemc
    --cuda-emulate: the generated CUDA kernels on the host, the fused
    attention forward and backward among them): 1 and 2 stages train 5
    steps with bitwise equal losses, the loss falls, and the first step's
    loss is the evaluator's on the same batch within the CUDA kernels'
    bound."""
    model = tandem.from_onnx(path, stage_ends=["h.0"])
    runs = {}
    for stages in (1, 2):
        pipeline = tandem.compile(model, stages=stages, microbatches=2, schedule="1f1b", target="cuda",
                                  extra_args=["--cuda-emulate"], optimizer="optimizer=adamw lr=0.01",
                                  out=tmp_path / f"s{stages}")
        runs[stages] = pipeline, [row["loss"] for row in pipeline.train(data=corpus, steps=5, progress=False)]
    pipeline, losses = runs[1]
    assert runs[2][1] == losses and losses[-1] < losses[0], runs
    program = (pipeline.program / "rank0.mlir").read_text()
    assert program.count("nn.attention ") == program.count("nn.attention_grad ") == 2
    evaluated = harness.run(
        "tandem-eval", pipeline.program / "pipeline.mlir", "--train", "--program", "pipeline", "--steps", 1,
        "--data", corpus, "--params", pipeline.directory / "start.safetensors",
    )
    expected = harness.parse_step_losses(evaluated.stdout)[0]
    bound = tolerance.chain_bound(model.text, "forward", "cuda")
    error = abs(losses[0] - expected) / abs(expected)
    harness.record(f"{path.stem}-cuda-emulated", f"first loss rel error vs the evaluator {error:.3e} (bound {bound:.2e})")
    assert error <= bound, (error, bound)


# --- graphs built with onnx's helpers --------------------------------------


def _graph(nodes, inputs, initializers, opset=20):
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info("loss", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(np.asarray(v), n) for n, v in initializers.items()])
    # IR version 10: what onnxruntime 1.31 reads (onnx 1.23 writes 14 by default).
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)
    onnx.checker.check_model(proto)
    return proto


def _rng(shape, seed, scale=0.5):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def test_gpt2_block_operators_match_onnxruntime(tmp_path):
    """Gemm, exact and tanh Gelu, LayerNormalization without a bias,
    LogSoftmax + NegativeLogLikelihoodLoss, Unsqueeze/Squeeze, Slice,
    Concat, Expand, Where on a comparison, Sigmoid, ReduceMean and a
    batched MatMul whose batch broadcasts."""
    b, t, d, v = 2, 4, 8, 16
    init = {
        "wte": _rng((v, d), 0), "w1": _rng((d, d), 1), "b1": _rng((d,), 2),
        "w2": _rng((d, d), 3), "ln_w": _rng((d,), 4) + 1.0, "k": _rng((1, d, d), 5),
        "pos": np.arange(t, dtype=np.int64), "axes0": np.asarray([0], np.int64),
        "starts": np.asarray([1], np.int64), "ends": np.asarray([100], np.int64), "axis1": np.asarray([1], np.int64),
        "shape2": np.asarray([b * t, d], np.int64), "shape3": np.asarray([b, t, d], np.int64),
        "flat": np.asarray([-1], np.int64), "half": np.asarray(0.5, np.float32), "expand": np.asarray([b, t, d], np.int64),
    }
    nodes = [
        helper.make_node("Gather", ["wte", "idx"], ["x"]),
        helper.make_node("Reshape", ["x", "shape2"], ["x2"]),
        helper.make_node("Gemm", ["x2", "w1", "b1"], ["g"], transB=1, alpha=0.5),
        helper.make_node("Gelu", ["g"], ["g1"]),
        helper.make_node("Gelu", ["g"], ["g2"], approximate="tanh"),
        helper.make_node("Sigmoid", ["g"], ["g3"]),
        helper.make_node("Add", ["g1", "g2"], ["g12"]),
        helper.make_node("Mul", ["g12", "g3"], ["h2"]),
        helper.make_node("Reshape", ["h2", "shape3"], ["h"]),
        helper.make_node("LayerNormalization", ["h", "ln_w"], ["n"], epsilon=1e-5),
        helper.make_node("MatMul", ["n", "k"], ["nk"]),  # [b,t,d] @ [1,d,d]
        helper.make_node("Slice", ["nk", "starts", "ends", "axis1"], ["s"]),
        helper.make_node("Slice", ["nk", "axes0", "starts", "axis1"], ["s0"]),
        helper.make_node("Concat", ["s0", "s"], ["c"], axis=1),
        helper.make_node("Expand", ["half", "expand"], ["halves"]),
        helper.make_node("Greater", ["c", "halves"], ["big"]),
        helper.make_node("Where", ["big", "halves", "c"], ["clipped"]),
        helper.make_node("ReduceMean", ["clipped", "flat"], ["m"], keepdims=1),
        helper.make_node("Sub", ["clipped", "m"], ["centred"]),
        helper.make_node("Unsqueeze", ["centred", "axes0"], ["u"]),
        helper.make_node("Squeeze", ["u", "axes0"], ["sq"]),
        helper.make_node("MatMul", ["sq", "w2"], ["logits8"]),
        helper.make_node("Reshape", ["logits8", "shape2"], ["l2"]),
        helper.make_node("LogSoftmax", ["l2"], ["logp"], axis=-1),
        helper.make_node("Reshape", ["targets", "flat"], ["y"]),
        helper.make_node("NegativeLogLikelihoodLoss", ["logp", "y"], ["loss"], reduction="mean"),
    ]
    inputs = [helper.make_tensor_value_info("idx", TensorProto.INT64, [b, t]),
              helper.make_tensor_value_info("targets", TensorProto.INT64, [b, t])]
    proto = _graph(nodes, inputs, init)
    trainable = ["wte", "w1", "b1", "w2", "ln_w", "k"]
    model = tandem.from_onnx(proto, trainable=trainable)
    assert sorted(model.parameter_names) == sorted(trainable)
    assert "nn.one_hot" in model.text and "nn.erf" in model.text and "nn.gelu" in model.text
    _check_loss(tmp_path, model, proto)
    # Its gradient exists for every parameter the loss reads.
    source, _ = model.save(tmp_path / "grad")
    harness.run("tandem-opt", source, "--nn-autodiff", "-o", tmp_path / "grad.mlir")


def test_softmax_cross_entropy_sum_over_classes_axis_1(tmp_path):
    """SoftmaxCrossEntropyLoss with [N, C, T] scores (classes on axis 1)
    and reduction sum."""
    n, c, t = 2, 5, 3
    init = {"w": _rng((c, c), 7)}
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["s"]),
        helper.make_node("Transpose", ["s"], ["scores"], perm=[0, 2, 1]),
        helper.make_node("SoftmaxCrossEntropyLoss", ["scores", "y"], ["loss"], reduction="sum"),
    ]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, t, c]),
              helper.make_tensor_value_info("y", TensorProto.INT64, [n, t])]
    proto = _graph(nodes, inputs, init, opset=18)
    _check_loss(tmp_path, tandem.from_onnx(proto, trainable=["w"]), proto)


# --- diagnostics -----------------------------------------------------------


def _refused(proto, **kwargs):
    with pytest.raises(tandem.UnsupportedError) as error:
        tandem.from_onnx(proto, **kwargs)
    return str(error.value)


def _small(nodes, output_shape=(), x_shape=(2, 3), extra_init=None):
    init = {"w": _rng((3, 3), 9)}
    init.update(extra_init or {})
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("loss", TensorProto.FLOAT, list(output_shape))],
        [numpy_helper.from_array(v, k) for k, v in init.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def test_unsupported_operator_names_it_and_the_node():
    proto = _small([helper.make_node("MatMul", ["x", "w"], ["h"]),
                    helper.make_node("CumSum", ["h", "axis"], ["c"], name="my_cumsum"),
                    helper.make_node("ReduceSum", ["c"], ["loss"], keepdims=0)],
                   extra_init={"axis": np.asarray(0, np.int64)})
    message = _refused(proto)
    assert "'CumSum'" in message and "my_cumsum" in message, message


def test_loss_must_be_a_scalar():
    proto = _small([helper.make_node("MatMul", ["x", "w"], ["loss"])], output_shape=(2, 3))
    assert "scalar" in _refused(proto)


def test_dynamic_shapes_are_refused():
    proto = _small([helper.make_node("MatMul", ["x", "w"], ["h"]),
                    helper.make_node("ReduceSum", ["h"], ["loss"], keepdims=0)], x_shape=("batch", 3))
    assert "dynamic shape" in _refused(proto)


def test_stage_ends_must_exist():
    assert "'h.7'" in _refused(NANOGPT, stage_ends=["h.7"])


def test_trainable_names_must_exist():
    proto = _small([helper.make_node("MatMul", ["x", "w"], ["h"]),
                    helper.make_node("ReduceSum", ["h"], ["loss"], keepdims=0)])
    assert "'nope'" in _refused(proto, trainable=["w", "nope"])


def test_training_mode_dropout_is_refused():
    proto = _small([helper.make_node("MatMul", ["x", "w"], ["h"]),
                    helper.make_node("Dropout", ["h", "ratio", "training"], ["d"]),
                    helper.make_node("ReduceSum", ["d"], ["loss"], keepdims=0)],
                   extra_init={"ratio": np.asarray(0.1, np.float32), "training": np.asarray(True)})
    assert "eval mode" in _refused(proto)
