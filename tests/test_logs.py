"""Quiet native logs: no CUDA, cuInit, oneDNN or absl noise on a CPU-only machine; real errors still show."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT
from pipeline.logs import forward_filtered, is_noise
from pipeline.rundir import run_path

NOISE = [
    "WARNING: All log messages before absl::InitializeLog() is called are written to STDERR",
    "I0000 00:00:1795587737.889979   26204 cudart_stub.cc:31] Could not find cuda drivers on your machine, GPU will "
    "not be used.",
    "E0000 00:00:1795587738.591487   26204 cuda_platform.cc:52] failed call to cuInit: INTERNAL: CUDA error: Failed "
    "call to cuInit: UNKNOWN ERROR (303)",
    "I0000 00:00:1795588229.753861   28394 port.cc:153] oneDNN custom operations are on. You may see slightly "
    "different numerical results due to floating-point round-off errors from different computation orders.",
    "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the "
    "appropriate compiler flags.",
    "W0000 00:00:1795588229.1   28394 tf_trt.cc:1] TF-TRT Warning: Could not find TensorRT",
    "I0000 00:00:1795588229.2   28394 service.cc:148] XLA service 0x5 initialized for platform Host",
    "E0000 00:00:1795600600.614371   16086 util.cc:131] oneDNN supports DT_INT64 only on platforms with AVX-512. "
    "Falling back to the default Eigen-based implementation if present.",
]
REAL = [
    "E0000 00:00:1795588229.3   28394 op_kernel.cc:1841] OP_REQUIRES failed at strided_slice_op.cc:117 : "
    "INVALID_ARGUMENT: slice index 3 of dimension 0 out of bounds.",
    "W0000 00:00:1795588229.4   28394 allocator.cc:122] Allocation of 4000000000 exceeds 10% of free system memory.",
    "Traceback (most recent call last):",
    "E0000 00:00:1795588229.6   28394 cuda_driver.cc:1] failed to allocate 2.0G from device: "
    "CUDA_ERROR_OUT_OF_MEMORY: out of memory",
    "E0000 00:00:1795588229.7   28394 cuda_dnn.cc:1] Loaded runtime CuDNN library: 8.1.0 but source was compiled "
    "with: 8.9.4.",
    "translate:  40%|████      | 4/10 [00:01<00:02,  2.50 sent/s]",
]


@pytest.mark.parametrize("line", NOISE)
def test_cpu_only_noise_is_dropped(line):
    assert is_noise(line)


@pytest.mark.parametrize("line", REAL)
def test_real_warnings_errors_and_python_output_pass(line):
    assert not is_noise(line) and not is_noise(line, no_gpu=False)


def test_no_gpu_notes_show_where_a_gpu_is_visible():
    assert is_noise(NOISE[2], no_gpu=True) and not is_noise(NOISE[2], no_gpu=False)      # failed call to cuInit
    assert is_noise(NOISE[5], no_gpu=False)                                              # TensorRT: everywhere


def test_a_broken_sink_drops_the_rest_without_blocking_the_writers():
    import io

    class Broken(io.BytesIO):
        def write(self, data):
            raise BrokenPipeError

    source = io.BytesIO(b"".join(f"line {i}\n".encode() for i in range(1000)) + b"x" * 200_000 + b"\n")
    forward_filtered(source, Broken())
    assert source.tell() == len(source.getvalue())                                       # read to the end


FILTERED = """
import os, sys
sys.path.insert(0, {root!r})
from pipeline.logs import quiet_native_logs
quiet_native_logs()
os.write(2, {noise!r}.encode() + b"\\n")
os.write(2, {real!r}.encode() + b"\\n")
print("python says hello", file=sys.stderr)
"""


@pytest.mark.parametrize("show_all", [False, True])
def test_the_filter_drops_noise_from_file_descriptor_2_unless_asked(show_all):
    env = {**os.environ, "NMT_NATIVE_LOGS": "1" if show_all else "0"}
    code = FILTERED.format(root=str(ROOT), noise=NOISE[2], real=REAL[0])
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert result.returncode == 0
    lines = result.stderr.splitlines()
    assert "python says hello" in lines and REAL[0] in lines
    assert (NOISE[2] in lines) == show_all


def test_a_script_on_a_cpu_only_machine_prints_no_native_noise(trained_tiny):
    env = {key: value for key, value in os.environ.items() if key not in ("TF_CPP_MIN_LOG_LEVEL", "NMT_NATIVE_LOGS")}
    result = subprocess.run([sys.executable, str(ROOT / "scripts" / "translate.py"), "--run",
                             str(run_path(trained_tiny)), "--beam", "1", "I love you."],
                            capture_output=True, text=True, timeout=300, cwd=ROOT, env=env)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip()
    assert [line for line in result.stderr.splitlines() if line.strip()] == []


CRASH = """
import os, sys
sys.path.insert(0, {root!r})
from pipeline.logs import quiet_native_logs
quiet_native_logs()
os.write(2, b"F0000 00:00:1795588229.5   28394 check.cc:1] Check failed: the last words of a crashing process\\n")
os.abort()
"""


def test_the_last_native_lines_of_a_crashing_process_still_show():
    result = subprocess.run([sys.executable, "-c", CRASH.format(root=str(ROOT))], capture_output=True, text=True,
                            timeout=60, env={**os.environ, "NMT_NATIVE_LOGS": "0"})
    assert result.returncode != 0
    assert "Check failed: the last words of a crashing process" in result.stderr
