"""Quantising the ONNX twin says nothing on the user's terminal (issue #32: `make demo` printed
onnxruntime's "Please consider to run pre-processing before quantization ..." as a peerlint warning)."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_onnxruntime_advice_goes_to_the_debug_log(tmp_path):
    script = textwrap.dedent(f"""
        import logging, sys
        import numpy as np, onnx
        from onnx import TensorProto, helper, numpy_helper
        from peerlint.index.embedding.onnx_route import _quantise

        w = numpy_helper.from_array(np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32), "w")
        graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["y"])], "g",
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
        onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), r"{tmp_path}/m.onnx")
        seen = []
        handler = logging.Handler(logging.DEBUG)
        handler.emit = lambda record: seen.append((record.name, record.levelno, record.getMessage()))
        logging.getLogger("peerlint").addHandler(handler)
        logging.getLogger("peerlint").setLevel(logging.DEBUG)
        _quantise(__import__("pathlib").Path(r"{tmp_path}/m.onnx"), __import__("pathlib").Path(r"{tmp_path}/q.onnx"))
        logging.warning("a later warning")  # the root logger was left as it was: basicConfig prints this one
        assert any(level == logging.DEBUG and "pre-processing before quantization" in m for _, level, m in seen), seen
        print("quantised", flush=True)
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "quantised" in out.stdout and (tmp_path / "q.onnx").is_file()
    assert "pre-processing" not in out.stderr and "a later warning" in out.stderr
