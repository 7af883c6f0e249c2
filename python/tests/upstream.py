"""Runs the Tandem passes the comparisons need. Every piece they use has
landed (nn-autodiff, nn-optimizer, tandem-eval's --train/--save-* flags), so
a failure here is a test failure, never a skip."""

import harness


def autodiff(model_path, out_path):
    """tandem-opt --nn-autodiff on the model, into out_path."""
    return passes(model_path, out_path, "--nn-autodiff")


def optimizer(grad_path, out_path, options):
    """tandem-opt --nn-optimizer="options" on a gradient module."""
    return passes(grad_path, out_path, f"--nn-optimizer={options}")


def passes(model_path, out_path, *pass_args):
    """Runs tandem-opt with `pass_args` into out_path and returns the text."""
    args = [model_path, *pass_args, "-o", out_path]
    done = harness.run("tandem-opt", *args, check=False)
    if done.returncode != 0 or not out_path.exists():
        raise AssertionError(
            f"tandem-opt {' '.join(str(a) for a in args)} failed ({done.returncode}):\n"
            f"{done.stdout}{done.stderr}"
        )
    return out_path.read_text()


def require_eval_flags(*flags):
    missing = [f"--{f}" for f in flags if not harness.eval_has(f)]
    assert not missing, f"tandem-eval has no {', '.join(missing)}"
