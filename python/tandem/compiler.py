"""`tandem.compile` and what it returns: a compiled pipeline that knows its
files, predicts its memory, simulates its step, draws its timeline, trains
(with a progress bar) and gives the trained parameters back."""

import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import numpy as np
from safetensors.numpy import load_file, save_file

from .tools import ToolError, find


def _run(command, what):
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True)
    if done.returncode != 0:
        raise ToolError(f"{what} failed (exit {done.returncode}):\n{done.stderr}{done.stdout}")
    return done


def compile(  # noqa: A001 - the verb users expect
    model,
    stages=1,
    microbatches=1,
    schedule="1f1b",
    precision="f32",
    remat=None,
    target="cpu",
    optimizer="optimizer=adamw lr=0.001",
    chunks=None,
    out=None,
    extra_args=(),
):
    """Compiles a `Model` into a pipeline of `stages` ranks.

    The options are tandemc's (`tandemc --help`): `schedule` gpipe, 1f1b,
    interleaved-1f1b or zb-h1; `precision` f32, bf16 or fp16; `remat` none,
    full, selective, budget=BYTES or annotated (recompute exactly the ops
    marked `nn.recompute`, which `from_jax` writes for `jax.checkpoint`
    regions; the other policies ignore the marks); by default annotated
    when the model has such marks, else none; `target` cpu or cuda;
    `optimizer` nn-optimizer's options. `out` is the output directory (a
    new temporary one by default).
    """
    if remat is None:
        remat = default_remat(model)
    directory = pathlib.Path(out) if out else pathlib.Path(tempfile.mkdtemp(prefix="tandem-"))
    source, init = model.save(directory)
    program = directory / "pipeline"
    command = [
        find("tandemc"), source, "-o", program,
        "--stages", stages, "--microbatches", microbatches, "--schedule", schedule,
        "--precision", precision, "--remat", remat, "--optimizer", optimizer,
        "--target", target, "--memory",
    ]
    if chunks is not None:
        command += ["--chunks", chunks]
    command += list(extra_args)
    done = _run(command, "tandemc")
    memory = {}
    for rank, peak in re.findall(r"remark: rank (\d+): peak (\d+) bytes", done.stderr):
        memory[int(rank)] = int(peak)
    compiled = Compiled(model, directory, program, init, memory, stages)
    compiled.remarks = done.stderr
    return compiled


def default_remat(model):
    """`compile`'s remat when none is given: "annotated" when an op of the
    model carries `nn.recompute` (a jax.checkpoint region), else "none"."""
    return "annotated" if re.search(r"[{,]\s*nn\.recompute\b", model.text) else "none"


class Compiled:
    """A compiled pipeline (see `tandem.compile`)."""

    def __init__(self, model, directory, program, init, memory, stages):
        self.model = model
        self.directory = directory
        self.program = program
        self.initial_parameters = init
        self.memory = memory  # rank -> predicted peak bytes (mpmd-memory)
        self.remarks = ""  # tandemc's remarks (stderr): mpmd-remat's, mpmd-memory's
        self.stages = int(stages)
        self.history = []
        self.trained_parameters = None
        self._simulation = {}

    # --- predictions ----------------------------------------------------

    def simulate(self, device="cpu-2core", svg=None):
        """The simulated step (mpmd-simulate on `device`, a name from
        devices/ or a JSON file): {'step_time': seconds, 'bubble': mean,
        'ranks': {rank: {'busy', 'idle', 'bubble', 'peak_memory'}}}."""
        options = f"device={device}" + (f" svg={svg}" if svg else "")
        done = _run(
            [find("tandem-opt"), self.program / "pipeline.mlir", f"--mpmd-simulate={options}", "-o", os.devnull],
            "mpmd-simulate",
        )
        step = re.search(r"simulated step time (\S+) s .*mean bubble (\S+)", done.stderr)
        if not step:
            raise ToolError(f"mpmd-simulate printed no step time:\n{done.stderr}")
        ranks = {}
        for rank, busy, idle, bubble, peak in re.findall(
            r"rank (\d+): busy (\S+) s, idle (\S+) s, bubble (\S+),.*peak memory (\d+) bytes", done.stderr
        ):
            ranks[int(rank)] = {
                "busy": float(busy),
                "idle": float(idle),
                "bubble": float(bubble),
                "peak_memory": int(peak),
            }
        return {"step_time": float(step.group(1)), "bubble": float(step.group(2)), "ranks": ranks}

    @property
    def simulated_step(self):
        """Seconds per step, simulated on the default device."""
        if "default" not in self._simulation:
            self._simulation["default"] = self.simulate()
        return self._simulation["default"]["step_time"]

    def timeline(self, path=None, device="cpu-2core"):
        """The simulated step as an SVG timeline: its text, also written to
        `path` when given."""
        target = pathlib.Path(path) if path else self.directory / "timeline.svg"
        self.simulate(device=device, svg=target)
        return target.read_text()

    # --- training -------------------------------------------------------

    def _manifests(self):
        paths = sorted(self.program.glob("rank*.json"), key=lambda p: int(re.sub(r"\D", "", p.stem)))
        if not paths:
            raise ToolError(f"{self.program} holds no rank manifests: compile with target='cpu' or 'cuda'")
        return [json.loads(p.read_text()) for p in paths]

    def _start_file(self):
        """The model's initial values plus every other state the program
        declares (optimizer moments, the step counter) at its initializer,
        which must be a constant: the file `tandem-run --params` reads."""
        start = self.directory / "start.safetensors"
        initial = dict(load_file(str(self.initial_parameters)))
        tensors = {}
        for manifest in self._manifests():
            for p in manifest["parameters"]:
                name = p["name"]
                if name in tensors:
                    continue
                dtype = np.dtype(_NUMPY_DTYPES[p["dtype"]])
                shape = tuple(p["shape"])
                if name in initial:
                    tensors[name] = np.asarray(initial[name], dtype=dtype).reshape(shape)
                    continue
                init = p.get("init", {})
                if init.get("kind") == "zeros":
                    tensors[name] = np.zeros(shape, dtype)
                elif init.get("kind") == "ones":
                    tensors[name] = np.ones(shape, dtype)
                elif init.get("kind") == "constant":
                    tensors[name] = np.full(shape, init.get("a", 0.0), dtype)
                else:
                    raise ToolError(
                        f"the program declares '{name}' with a {init.get('kind')} initializer and the "
                        "model has no value for it"
                    )
        save_file(tensors, str(start))
        return start

    def train(
        self,
        data,
        steps,
        eval_every=0,
        checkpoints=None,
        checkpoint_every=0,
        seed=0,
        transport="inproc",
        progress=True,
        extra_args=(),
    ):
        """Trains with tandem-run and returns the history: one dict per step
        with 'step', 'loss', 'held_out_loss' (None between evaluations) and
        'tokens_per_s'. `data` is a byte-level token file (the model's two
        integer B×T inputs are tokens and targets), or arrays for every
        input of the model: a list of arrays in the loss function's batch
        order, a dict or a .npz/.safetensors file of `input.<i>` arrays (an
        .npz from `np.savez(path, *arrays)` in order), each holding whole
        step batches along dimension 0. With `checkpoints` (a directory), a
        checkpoint every `checkpoint_every` steps."""
        source = self._data_arguments(data)
        final = self.directory / "trained.safetensors"
        command = [
            find("tandem-run"), self.program, *source, "--steps", steps, "--seed", seed,
            "--params", self._start_file(), "--save-params", final, "--transport", transport,
        ]
        if eval_every:
            command += ["--eval-every", eval_every]
        if checkpoints:
            command += ["--ckpt-dir", checkpoints, "--ckpt-every", checkpoint_every or steps]
        command += list(extra_args)
        env = dict(os.environ)
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        history = {}
        bar = _progress(steps, progress)
        output = []
        with subprocess.Popen(
            [str(c) for c in command], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env
        ) as process:
            for line in process.stdout:
                output.append(line)
                step = re.match(r"step (\d+) loss (\S+) time \S+ s tokens/s (\S+)", line)
                held = re.match(r"held-out loss at step (\d+): (\S+)", line)
                if step:
                    k = int(step.group(1))
                    row = history.setdefault(k, {"step": k, "loss": None, "held_out_loss": None, "tokens_per_s": None})
                    row["loss"] = float(step.group(2))
                    row["tokens_per_s"] = float(step.group(3))
                    if bar is not None:
                        bar.set_postfix(loss=f"{row['loss']:.4f}", tok_s=f"{row['tokens_per_s']:.0f}")
                        bar.update(1)
                elif held:
                    k = int(held.group(1))
                    row = history.setdefault(k, {"step": k, "loss": None, "held_out_loss": None, "tokens_per_s": None})
                    row["held_out_loss"] = float(held.group(2))
        if bar is not None:
            bar.close()
        if process.returncode != 0:
            raise ToolError(f"tandem-run failed (exit {process.returncode}):\n{''.join(output)}")
        self.output = "".join(output)
        self.history = [history[k] for k in sorted(history)]
        self.trained_parameters = final
        return self.history

    def _data_arguments(self, data):
        """tandem-run's data options for `data` (see `train`)."""
        if isinstance(data, (str, pathlib.Path)):
            path = pathlib.Path(data)
            if not path.is_file():
                raise ToolError(f"no data file {path}")
            if path.suffix == ".npz":
                with np.load(path) as loaded:
                    keys = list(loaded.files)
                    named = all(k.startswith("input.") for k in keys)
                    data = {k: loaded[k] for k in keys} if named else [loaded[k] for k in keys]
            elif path.suffix == ".safetensors":
                data = dict(load_file(str(path)))
            else:
                return ["--data", path]
        if isinstance(data, (list, tuple)):
            data = {f"input.{i}": a for i, a in enumerate(data)}
        return ["--arrays", self._arrays_file(data)]

    def _arrays_file(self, arrays):
        """`arrays` ({'input.<i>': array}) checked against the program's
        step inputs and written where tandem-run reads them."""
        steps = {}
        for manifest in self._manifests():
            for entry in manifest["inputs"]:
                steps[entry["index"]] = (tuple(entry["step_shape"]), np.dtype(_NUMPY_DTYPES[entry["dtype"]]))
        tensors = {}
        batches = None
        for index, (shape, dtype) in sorted(steps.items()):
            name = f"input.{index}"
            if name not in arrays:
                raise ToolError(f"the data has no array for {name} (the model's batch argument {index})")
            array = np.asarray(arrays[name])
            if array.dtype.kind != dtype.kind and not (array.dtype.kind in "iu" and dtype.kind in "iu"):
                raise ToolError(f"{name} is {array.dtype.name}; the model takes {dtype.name}")
            if array.ndim != len(shape) or array.shape[1:] != shape[1:] or array.shape[0] % shape[0]:
                raise ToolError(
                    f"{name} has shape {list(array.shape)}; the model takes step batches of {list(shape)}, "
                    f"so dimension 0 must be a multiple of {shape[0]}"
                )
            count = array.shape[0] // shape[0]
            if batches is not None and count != batches:
                raise ToolError(f"{name} holds {count} step batches, the other arrays {batches}")
            batches = count
            tensors[name] = np.ascontiguousarray(array.astype(dtype, copy=False))
        batch_args = {f"input.{i}" for i in range(len(self.model.inputs))}
        extra = sorted(set(arrays) - set(tensors) - batch_args)
        if extra:
            raise ToolError(f"the data has arrays {extra} that are not inputs of the program")
        path = self.directory / "arrays.safetensors"
        save_file(tensors, str(path))
        return path

    def parameters(self, named=False):
        """The trained parameters (after `train`), as numpy arrays in the
        model's structure (a JAX pytree for a model from JAX), or with
        `named` as {Tandem parameter name: array} including the optimizer
        state."""
        if self.trained_parameters is None:
            raise ToolError("nothing trained yet: call train() first")
        tensors = dict(load_file(str(self.trained_parameters)))
        if named:
            return tensors
        return self.model.structured({n: tensors[n] for n in self.model.parameter_names})

    def plot(self, path=None, title=None):
        """The loss curve of the history (and the held-out loss): a
        matplotlib Figure, saved to `path` when given."""
        return plot_history(self.history, path, title)


_NUMPY_DTYPES = {"f64": "float64", "f32": "float32", "f16": "float16", "bf16": "bfloat16", "i32": "int32", "i64": "int64"}


def plot_history(history, path=None, title=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 3.5))
    steps = [r["step"] for r in history if r["loss"] is not None]
    axes.plot(steps, [r["loss"] for r in history if r["loss"] is not None], label="training loss")
    held = [(r["step"], r["held_out_loss"]) for r in history if r["held_out_loss"] is not None]
    if held:
        axes.plot(*zip(*held), "o-", label="held-out loss")
    axes.set_xlabel("step")
    axes.set_ylabel("loss")
    if title:
        axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    if path:
        figure.savefig(path)
    return figure


def _progress(steps, enabled):
    if not enabled:
        return None
    from tqdm import tqdm

    return tqdm(total=int(steps), unit="step", file=sys.stderr, leave=False)
