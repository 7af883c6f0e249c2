"""Checks, at the start of a test, whether the upstream pieces it needs
exist yet; skips with the precise reason when they do not."""

import pytest

import harness


def autodiff(model_path, out_path):
    """tandem-opt --nn-autodiff on the model, into out_path."""
    return passes(model_path, out_path, "--nn-autodiff")


def optimizer(grad_path, out_path, options):
    """tandem-opt --nn-optimizer="options" on a gradient module."""
    return passes(grad_path, out_path, f"--nn-optimizer={options}")


def passes(model_path, out_path, *pass_args):
    """Runs tandem-opt with `pass_args` into out_path and returns the text.
    Skips while a pass reports it is not implemented yet, or does not know
    an option the test passes; any other failure fails the test."""
    args = [model_path, *pass_args, "-o", out_path]
    done = harness.run("tandem-opt", *args, check=False)
    output = done.stdout + done.stderr
    if done.returncode != 0 or not out_path.exists():
        for line in output.splitlines():
            if harness.NOT_IMPLEMENTED in line:
                pytest.skip(f"upstream not ready: tandem-opt reports '{line.strip()}'")
            if "no such option" in line:
                pytest.skip(
                    f"upstream not ready: tandem-opt {' '.join(pass_args)} reports '{line.strip()}'"
                )
        raise AssertionError(
            f"tandem-opt {' '.join(str(a) for a in args)} failed ({done.returncode}):\n{output}"
        )
    return out_path.read_text()


def require_eval_flags(*flags):
    missing = [f"--{f}" for f in flags if not harness.eval_has(f)]
    if missing:
        pytest.skip(f"upstream not ready: tandem-eval has no {', '.join(missing)} yet")
