"""Running Tandem's tools from the tests and reading what they produce.

Paths come from TANDEM_BUILD_DIR and TANDEM_SOURCE_DIR (scripts/test.sh
sets both); without them, the checkout this file lives in and its build/.
"""

import functools
import os
import pathlib
import re
import subprocess

import numpy as np

SOURCE_DIR = pathlib.Path(
    os.environ.get("TANDEM_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2])
)
BUILD_DIR = pathlib.Path(os.environ.get("TANDEM_BUILD_DIR", SOURCE_DIR / "build"))
BIN_DIR = BUILD_DIR / "bin"
EXAMPLES = SOURCE_DIR / "examples"
LOG_DIR = BUILD_DIR / "test-logs"


def tool(name):
    """The path of a Tandem tool; builds it (only it) when it is missing."""
    path = BIN_DIR / name
    if not path.exists():
        subprocess.run(["ninja", "-C", str(BUILD_DIR), "tandem-eval", "tandem-opt"], check=True)
    return path


def run(name, *args, check=True):
    """Runs a tool; on failure (with check) raises with its whole output."""
    command = [str(tool(name))] + [str(a) for a in args]
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(
            f"{' '.join(command)} exited with {done.returncode}\n"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        )
    return done


@functools.cache
def eval_help():
    return run("tandem-eval", "--help").stdout


def eval_has(flag):
    """Whether tandem-eval accepts --<flag> (read from its --help)."""
    return re.search(rf"--{re.escape(flag)}\b", eval_help()) is not None


def parse_loss(stdout):
    match = re.search(r"^loss: (\S+)$", stdout, re.MULTILINE)
    assert match, f"no 'loss: ...' line in tandem-eval's output:\n{stdout}"
    return float(match.group(1))


def parse_step_losses(stdout):
    """{k: loss} from `step k: loss L` lines of tandem-eval --train."""
    return {int(k): float(v) for k, v in re.findall(r"^step (\d+): loss (\S+)", stdout, re.MULTILINE)}


def parse_printed_results(stdout):
    """{i: np.ndarray (flat, float64)} from `result #i: <type> [a, b, ...]`
    lines printed with --print-outputs, with the shape read from the type."""
    out = {}
    for index, type_text, values in re.findall(
        r"^result #(\d+): (tensor<[^>]*>) \[(.*)\]$", stdout, re.MULTILINE
    ):
        shape = tensor_shape(type_text)
        flat = np.array([float(x) for x in values.split(", ")] if values else [], dtype=np.float64)
        out[int(index)] = flat.reshape(shape)
    return out


def printed_result_types(stdout):
    """{i: 'tensor<...>'} of the `result #i: ...` lines."""
    return {
        int(i): t for i, t in re.findall(r"^result #(\d+): (tensor<[^>]*>)", stdout, re.MULTILINE)
    }


def is_integer_type(type_text):
    """Whether a tensor type's element type is an integer (i32, si8, ui8...)."""
    element = re.fullmatch(r"tensor<(.*)>", type_text.strip()).group(1).split("x")[-1]
    return re.fullmatch(r"[su]?i\d+", element) is not None


def tensor_shape(type_text):
    """(8, 16) from 'tensor<8x16xi32>'; () from 'tensor<f32>'."""
    inner = re.fullmatch(r"tensor<(.*)>", type_text.strip()).group(1)
    return tuple(int(d) for d in inner.split("x")[:-1])


def parameter_declarations(mlir_text):
    """[(name, shape)] of the module's nn.parameter ops, in declaration order
    (Tandem's canonical parameter order)."""
    return [
        (name, tensor_shape(type_text))
        for name, type_text in re.findall(
            r"nn\.parameter @([\w.]+) : (tensor<[^>]*>)", mlir_text
        )
    ]


def attention_heads(mlir_text):
    match = re.search(r"nn\.attention .*heads = (\d+)", mlir_text)
    assert match, "no nn.attention with a heads attribute in the model"
    return int(match.group(1))


def layer_norm_epsilon(mlir_text):
    values = {float(v) for v in re.findall(r"nn\.layer_norm .*epsilon = ([-+.\deE]+)", mlir_text)}
    assert len(values) == 1, f"expected one layer-norm epsilon, found {values}"
    return values.pop()


def function_result_names(mlir_text, attribute, function):
    """The symbols in `attribute = [@a, @b]` of `function`'s signature."""
    match = re.search(
        rf"func\.func @{re.escape(function)}\(.*{re.escape(attribute)} = \[([^\]]*)\]", mlir_text
    )
    assert match, f"no {attribute} on @{function}"
    return [s.strip().lstrip("@").strip('"') for s in match.group(1).split(",") if s.strip()]


def echo_inputs_module(mlir_text, function="forward"):
    """The module with `function` changed to also return its inputs.

    tandem-eval generates a function's inputs from the seed, the argument
    index and the argument's uses (the vocabulary bound of an embedding or
    cross-entropy), and --data fills the two integer inputs from the same
    uses. Keeping the body and only appending the arguments to the return
    leaves all of that unchanged, so `--print-outputs` on the changed
    function shows exactly the inputs the original function gets.
    """
    lines = mlir_text.splitlines()
    header = re.compile(rf"^(\s*)func\.func @{re.escape(function)}\((.*)\) -> (.*?) \{{$")
    for start, line in enumerate(lines):
        match = header.match(line)
        if match:
            break
    else:
        raise AssertionError(f"no single-line signature of @{function}")
    indent, arguments, results = match.groups()
    names = re.findall(r"(%[\w.]+): ", arguments)
    types = [t.strip() for t in re.split(r"%[\w.]+: ", arguments) if t.strip()]
    types = [t.rstrip(",").strip() for t in types]
    result_types = results.strip()
    if result_types.startswith("("):
        result_types = result_types[1:-1]
    lines[start] = (
        f"{indent}func.func @{function}({arguments}) -> "
        f"({result_types}, {', '.join(types)}) {{"
    )
    for i in range(start + 1, len(lines)):
        if lines[i].startswith(indent + "}"):
            raise AssertionError(f"no return in @{function}")
        ret = re.match(r"^(\s*)return (.*) : (.*)$", lines[i])
        if ret:
            lines[i] = (
                f"{ret.group(1)}return {ret.group(2)}, {', '.join(names)} : "
                f"{ret.group(3)}, {', '.join(types)}"
            )
            break
    return "\n".join(lines) + "\n"


def relative_error(a, b):
    """||a - b|| / ||b|| over the whole tensor (b is the reference)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, f"shapes differ: {a.shape} vs {b.shape}"
    denominator = np.linalg.norm(b)
    if denominator == 0.0:
        return float(np.linalg.norm(a))
    return float(np.linalg.norm(a - b) / denominator)


def record(key, line):
    """Keeps one line per key in build/test-logs/jax-max-rel-error.txt."""
    LOG_DIR.mkdir(parents=True, exist_ok=True)
    path = LOG_DIR / "jax-max-rel-error.txt"
    entries = {}
    if path.exists():
        for existing in path.read_text().splitlines():
            name, _, rest = existing.partition(": ")
            entries[name] = rest
    entries[key] = line
    path.write_text("".join(f"{k}: {v}\n" for k, v in sorted(entries.items())))
    print(f"{key}: {line}")


def write_corpus(path):
    """A small English text, written by the tests (deterministic)."""
    sentences = [
        "The river ran quietly past the old mill, and the miller watched it from his door.",
        "Seven small birds sang in the green garden while the children counted clouds.",
        "A quick brown fox jumps over the lazy dog, then trots away into the tall grass.",
        "Every morning the baker lit his oven before dawn and sang while the bread rose.",
        "The lighthouse keeper wrote letters to nobody and kept them in a tin box.",
        "When the snow melted, the path to the mountain village opened once again.",
        "She planted beans in neat rows, seventeen to a row, and marked each with a stick.",
        "Numbers like 12, 345 and 6789 appear here so the bytes are not only letters.",
    ]
    lines = []
    for i in range(240):
        a = sentences[i % len(sentences)]
        b = sentences[(i * 5 + 3) % len(sentences)]
        lines.append(f"{i}. {a} {b}")
    path.write_text("\n".join(lines) + "\n")
    return path
