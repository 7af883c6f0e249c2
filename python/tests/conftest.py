import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

import pytest  # noqa: E402

import harness  # noqa: E402


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    return harness.write_corpus(tmp_path_factory.mktemp("data") / "corpus.txt")


@pytest.fixture(scope="session")
def gpt_mlir():
    return harness.EXAMPLES / "tiny-gpt.mlir"


@pytest.fixture(scope="session")
def mlp_mlir():
    return harness.EXAMPLES / "tiny-mlp.mlir"
