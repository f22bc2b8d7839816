"""Unit tests for probe.py with the host python3 and no GPU.

Decision functions get injected values; the whole probe runs once as a
subprocess to check the JSON shape and the no-libcuda diagnosis.
Run: python3 -m unittest discover -s smoke/probe -p '*_test.py'
"""
import json
import os
import re
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import probe  # noqa: E402


class PtxTest(unittest.TestCase):
    def test_minimum_version_per_target(self):
        cases = {(5, 2): "4.1", (7, 0): "6.0", (7, 5): "6.3", (8, 0): "7.0", (8, 6): "7.1", (8, 7): "7.4",
                 (8, 9): "7.8", (9, 0): "7.8", (10, 0): "8.6", (12, 0): "8.7", (12, 1): "8.8"}
        for cc, ver in cases.items():
            target, v, note = probe.ptx_target(cc)
            self.assertEqual(target, "sm_%d%d" % cc)
            self.assertEqual("%d.%d" % v, ver, cc)
            self.assertEqual(note, "")

    def test_unknown_cc_uses_newest_lower_base_target(self):
        target, v, note = probe.ptx_target((9, 5))
        self.assertEqual((target, v), ("sm_90", (7, 8)))
        self.assertIn("sm_95 unknown", note)

    def test_too_old_cc_is_an_error(self):
        with self.assertRaises(ValueError):
            probe.ptx_target((3, 5))

    def test_module_header_and_entries(self):
        for cc, header in (((7, 0), ".version 6.0\n.target sm_70"), ((9, 0), ".version 7.8\n.target sm_90"),
                           ((8, 0), ".version 7.0\n.target sm_80"), ((10, 0), ".version 8.6\n.target sm_100")):
            text = probe.ptx_module(cc)
            self.assertTrue(text.startswith(header + "\n.address_size 64"), text[:60])
            for name in probe.KERNEL_NAMES:
                self.assertIn(".visible .entry %s(" % name, text)
            self.assertNotIn("sm_90a", text)

    def test_module_lint(self):
        """Cheap static checks in lieu of ptxas: braces, registers declared, labels defined, params used."""
        text = probe.ptx_module((9, 0))
        bodies = re.sub(r"\{%[^}]*\}", "", text)  # drop vector operands {%f1, ...}
        self.assertEqual(bodies.count("{"), len(probe.KERNEL_NAMES))
        self.assertEqual(bodies.count("}"), len(probe.KERNEL_NAMES))
        decl = {m.group(1): int(m.group(2)) for m in re.finditer(r"\.reg \.\w+ %(\w+)<(\d+)>", text)}
        for m in re.finditer(r"%(p|h|r|f|rd)(\d+)\b", text):
            self.assertLess(int(m.group(2)), decl[m.group(1)], m.group(0))
        for label in set(re.findall(r"bra (\$\w+);", text)):
            self.assertEqual(text.count(label + ":"), 1, label)
        for name, params, _, _ in probe._KERNELS:
            body = text.split(".entry %s(" % name)[1].split(".visible")[0]
            for p in re.findall(r"\.param \.\w+ (\w+)", params):
                self.assertIn("[%s]" % p, body, (name, p))

    def test_fill_value_range(self):
        vals = [probe.fill_value(i, 7) for i in range(1000)]
        self.assertTrue(all(-0.5 <= v < 0.5 for v in vals))
        self.assertGreater(len(set(vals)), 500)


class VersionTest(unittest.TestCase):
    def test_decoding(self):
        self.assertEqual(probe.cuda_version_str(12060), "12.6")
        self.assertEqual(probe.cuda_version_str(11020), "11.2")
        self.assertEqual(probe.cuda_version_str(13000), "13.0")
        self.assertEqual(probe.cudnn_version_str(8906), "8.9.6")
        self.assertEqual(probe.cudnn_version_str(90100), "9.1.0")
        self.assertEqual(probe.require_cuda("cuda>=12.6 brand=tesla,driver>=470,driver<471"), "12.6")
        self.assertIsNone(probe.require_cuda(None))


class DriverTest(unittest.TestCase):
    def test_driver_too_old_names_both_versions(self):
        r = probe.judge_driver_vs_cuda("11.4", "12.6", "470.82.01")
        self.assertEqual((r["status"], r["code"]), ("fail", "driver_too_old"))
        for s in ("CUDA 11.4", "CUDA 12.6", "470.82.01", "525.60.13", "error 35",
                  "CUDA driver version is insufficient for CUDA runtime version"):
            self.assertIn(s, r["reason"])
        self.assertIn("upgrade the host driver", r["fix"])

    def test_minor_version_compat_is_a_warning(self):
        r = probe.judge_driver_vs_cuda("12.2", "12.6")
        self.assertEqual((r["status"], r["code"]), ("warn", "minor_version_compat"))

    def test_new_enough(self):
        self.assertEqual(probe.judge_driver_vs_cuda("13.0", "12.6")["status"], "ok")
        self.assertEqual(probe.judge_driver_vs_cuda("12.6", "12.6.3")["status"], "ok")

    def test_unknown_image_cuda(self):
        self.assertEqual(probe.judge_driver_vs_cuda("12.6", None)["status"], "skipped")

    def test_init_errors(self):
        r = probe.diagnose_init_error(803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH")
        self.assertIn("unsupported display driver / cuda driver combination", r["reason"])
        self.assertEqual(r["code"], "driver_mismatch")
        self.assertEqual(probe.diagnose_init_error(100)["code"], "no_device")
        self.assertEqual(probe.diagnose_init_error(12345, None, "weird")["code"], "cuda_error")


class NoLibcudaTest(unittest.TestCase):
    ERR = "libcuda.so.1: cannot open shared object file: No such file or directory"

    def test_no_gpus_flag(self):
        r = probe.diagnose_no_libcuda(self.ERR, [], {}, "none")
        self.assertEqual(r["code"], "no_gpus_flag")
        self.assertIn("--gpus", r["reason"])
        self.assertIn(self.ERR, r["reason"])

    def test_runtime_missing_when_gpus_requested(self):
        r = probe.diagnose_no_libcuda(self.ERR, [], {}, "all")
        self.assertEqual(r["code"], "nvidia_runtime_missing")
        self.assertIn("nvidia-ctk runtime configure", r["fix"])

    def test_unknown_request(self):
        self.assertEqual(probe.diagnose_no_libcuda(self.ERR, [], {}, None)["code"], "no_gpu_passed")

    def test_capabilities_without_compute(self):
        r = probe.diagnose_no_libcuda(self.ERR, ["/dev/nvidia0"], {"NVIDIA_DRIVER_CAPABILITIES": "utility"}, "all")
        self.assertEqual(r["code"], "no_compute_capability")
        r = probe.diagnose_no_libcuda(self.ERR, ["/dev/nvidia0"], {}, "all")
        self.assertIn("unset", r["reason"])

    def test_devices_without_runtime(self):
        r = probe.diagnose_no_libcuda(self.ERR, ["/dev/nvidia0"], {"NVIDIA_DRIVER_CAPABILITIES": "all"}, None)
        self.assertEqual(r["code"], "libcuda_missing")


class ShmTest(unittest.TestCase):
    def test_docker_default_is_a_warning(self):
        r = probe.judge_shm(64 * 1000 * 1000)
        self.assertEqual(r["status"], "warn")
        self.assertIn("--shm-size", r["fix"])

    def test_two_gib_ok(self):
        self.assertEqual(probe.judge_shm(2 << 30)["status"], "ok")

    def test_not_mounted(self):
        self.assertEqual(probe.judge_shm(None)["status"], "warn")


GPU_RUN_CHECK = """Running verify PaddlePaddle program ...
W1122 device: 0, GPU Compute Capability: 8.0, Driver API Version: 12.2, Runtime API Version: 12.6
PaddlePaddle works well on 1 GPU.
PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now."""
CPU_RUN_CHECK = """Running verify PaddlePaddle program ...
PaddlePaddle works well on 1 CPU.
PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now."""


CHECK_OPS = ["add", "sum", "cast_fp16", "relu", "randn_moments", "matmul_fp32", "matmul_fp16", "conv2d"]


def check(op, ok=True, device="gpu:0", found=None, want=None, **kw):
    rec = {"op": op, "device": device, "ok": ok, "expected": want or [1.0, 2.0], "found": found or [1.0, 2.0],
           "max_abs_err": 0.0 if ok else 1.0, "tol": 1e-6}
    rec.update(kw)
    return rec


def gpu_checks(device="gpu:0", **bad):
    """A passing set of result records on `device`; bad={op: found} makes those ops wrong."""
    ops = CHECK_OPS if device.startswith("gpu") else [o for o in CHECK_OPS if o != "matmul_fp16"]
    return [check(op, op not in bad, device, found=bad.get(op)) for op in ops]


def gpu_info(**over):
    """The child's records for a GPU Paddle on which run_check worked and every result check passed."""
    info = {"version": "3.2.0", "python": "3.11.9", "compiled_with_cuda": True, "cuda": "12.6", "gpu_count": 1,
            "run_check_output": GPU_RUN_CHECK, "output_tail": "", "exit": 0, "run_check_raised": None,
            "checks_device": "gpu:0", "checks_planned": list(CHECK_OPS), "checks": gpu_checks(),
            "matmul": {"device": "gpu:0", "dtype": "float16", "n": 8192, "reps": 20, "tflops": 700.0}}
    info.update(over)
    return info


class PaddleTest(unittest.TestCase):
    def test_run_check_outcome(self):
        self.assertEqual(probe.run_check_outcome(GPU_RUN_CHECK), ("gpu", 1))
        self.assertEqual(probe.run_check_outcome(CPU_RUN_CHECK), ("cpu", 1))
        self.assertEqual(probe.run_check_outcome("PaddlePaddle works well on 8 GPUs."), ("gpu", 8))
        self.assertEqual(probe.run_check_outcome("boom"), (None, 0))

    def test_warnings(self):
        out = ("W1122 gpu_resources.cc:119] WARNING: device: 0. The installed Paddle is compiled with CUDNN 8.9, "
               "but CUDNN version in your machine is 8.6, which may cause serious incompatible bug.\n"
               "RuntimeError: CUDA driver version is insufficient for CUDA runtime version\n"
               "You are using GPU version PaddlePaddle, but there is no GPU detected on your machine.\n")
        kinds = [w["kind"] for w in probe.paddle_warnings(out)]
        self.assertEqual(kinds, ["cudnn_mismatch", "insufficient_driver", "no_gpu_detected"])

    def info(self, cuda):
        return {"version": "3.2.0", "compiled_with_cuda": cuda, "run_check_output": CPU_RUN_CHECK,
                "output_tail": "", "exit": 0}

    def test_cpu_only_paddle_in_gpu_image(self):
        r = probe.judge_paddle(self.info(False), "gpu", "12.6")
        self.assertEqual((r["status"], r["code"]), ("fail", "cpu_only_paddle"))
        self.assertIn("CPU-only Paddle build in a gpu image", r["reason"])
        self.assertIn("CUDA 12.6", r["reason"])
        self.assertIn("paddlepaddle-gpu", r["fix"])

    def test_cpu_paddle_in_cpu_image(self):
        r = probe.judge_paddle(self.info(False), "cpu", None)
        self.assertEqual(r["status"], "ok")
        self.assertEqual(r["run_check"]["works_on"], "cpu")

    def test_import_error(self):
        r = probe.judge_paddle({"import_error": "ModuleNotFoundError: x", "exit": 0}, "cpu", None)
        self.assertEqual(r["status"], "fail")

    def test_parse_child_output(self):
        out = ('@@IMGTOOL@@ {"version": "3.2.0", "compiled_with_cuda": false}\n@@RUN_CHECK_BEGIN@@\n'
               + CPU_RUN_CHECK + '\n@@IMGTOOL@@ {"run_check_raised": null}\n@@RUN_CHECK_END@@\nbye\n')
        info = probe.parse_paddle_output(0, out)
        self.assertEqual(info["version"], "3.2.0")
        self.assertIn("works well on 1 CPU", info["run_check_output"])
        self.assertNotIn("@@", info["run_check_output"])


class NoKernelImageTest(unittest.TestCase):
    """Paddle built without code for the GPU (PyPI's 2.6.2 on an H100): the error users meet is named
    with what the image holds and the fix (issue 24 section 3)."""
    ERR = ("RuntimeError: (PreconditionNotMet) The kernel (conv2d) failed: CUDA error(209), "
           "no kernel image is available for execution on the device.")

    def test_archs_serve_follows_cudas_rules(self):
        p262 = "sm_61,sm_70,sm_75,sm_80,sm_86"
        self.assertTrue(probe.archs_serve(p262, (8, 0)))
        self.assertTrue(probe.archs_serve(p262, (8, 9)))      # Ada runs the sm_86 cubins
        self.assertFalse(probe.archs_serve(p262, (9, 0)))
        self.assertFalse(probe.archs_serve(p262, (12, 0)))
        self.assertTrue(probe.archs_serve("sm_80,compute_80", (12, 0)))  # PTX: JIT
        self.assertIsNone(probe.archs_serve("", (9, 0)))
        self.assertIsNone(probe.archs_serve(p262, None))

    def test_the_error_in_run_check_is_diagnosed(self):
        info = {"version": "2.6.2", "compiled_with_cuda": True, "run_check_output": self.ERR, "output_tail": "",
                "exit": 0, "run_check_raised": self.ERR}
        r = probe.judge_paddle(info, "gpu", "11.8", [9, 0], "sm_61,sm_70,sm_75,sm_80,sm_86")
        self.assertEqual((r["status"], r["code"]), ("fail", "no_kernel_image"))
        self.assertIn("no kernels for compute capability 9.0", r["reason"])
        self.assertIn("sm_61,sm_70,sm_75,sm_80,sm_86", r["reason"])
        self.assertIn("sm_90", r["fix"])
        self.assertIn("no kernel image is available", r["evidence"])

    def test_a_failed_run_check_on_a_gpu_outside_the_archs_is_named_too(self):
        info = {"version": "2.6.2", "compiled_with_cuda": True, "run_check_output": "", "output_tail": "",
                "exit": 0, "run_check_raised": "RuntimeError: CUDA error(209)"}
        r = probe.judge_paddle(info, "gpu", "11.8", [9, 0], "sm_61,sm_70,sm_75,sm_80,sm_86")
        self.assertEqual(r["code"], "no_kernel_image")
        ok = probe.judge_paddle(dict(info, run_check_output=GPU_RUN_CHECK, run_check_raised=None, checks=gpu_checks()),
                                "gpu", "11.8", [8, 0], "sm_61,sm_70,sm_75,sm_80,sm_86")
        self.assertEqual(ok["status"], "ok", ok)


class ArchsServeTest(unittest.TestCase):
    """sm_XY: same major, minor >= Y; sm_XYa: X.Y only; sm_XYf: same major, minor >= Y; compute_XY: any cc >= X.Y."""

    def test_arch_specific_runs_on_its_own_cc_only(self):
        self.assertTrue(probe.archs_serve("sm_90a", (9, 0)))
        self.assertFalse(probe.archs_serve("sm_90a", (9, 1)))
        self.assertFalse(probe.archs_serve("sm_100a", (10, 3)))
        self.assertFalse(probe.archs_serve("compute_90a", (10, 0)))  # arch-specific PTX does not carry forward

    def test_family_runs_on_the_family(self):
        self.assertTrue(probe.archs_serve("sm_100f", (10, 0)))
        self.assertTrue(probe.archs_serve("sm_100f", (10, 3)))
        self.assertFalse(probe.archs_serve("sm_103f", (10, 0)))
        self.assertFalse(probe.archs_serve("sm_100f", (12, 0)))
        self.assertTrue(probe.archs_serve("compute_120f", (12, 1)))
        self.assertFalse(probe.archs_serve("compute_120f", (13, 0)))

    def test_plain_cubins_and_ptx(self):
        self.assertTrue(probe.archs_serve("sm_120", (12, 1)))
        self.assertFalse(probe.archs_serve("sm_86", (9, 0)))
        self.assertTrue(probe.archs_serve("compute_90", (12, 0)))
        self.assertFalse(probe.archs_serve("compute_90", (8, 9)))
        self.assertTrue(probe.archs_serve("sm_80, sm_90a ,SM_100F", (10, 3)))  # spaces and case
        self.assertTrue(probe.archs_serve("sm_80,sm_90a,sm_100f", (9, 0)))

    def test_unparsable_is_unknown_not_false(self):
        self.assertIsNone(probe.archs_serve("garbage", (9, 0)))
        self.assertFalse(probe.archs_serve("garbage,sm_80", (9, 0)))


class ResultChecksTest(unittest.TestCase):
    """Issue 31 section 0: run_check said "works well on 1 GPU" while x + 1 came back zeros."""

    def test_all_right_on_the_gpu_passes_with_its_throughput(self):
        r = probe.judge_paddle(gpu_info(), "gpu", "12.6", [9, 0], "sm_80,sm_90")
        self.assertEqual(r["status"], "ok", r)
        self.assertEqual((r["python"], r["failures"]), ("3.11.9", []))
        self.assertEqual(len(r["checks"]), len(CHECK_OPS))
        self.assertEqual(r["matmul"]["tflops"], 700.0)
        self.assertEqual(probe.metrics({"paddle": r})[0]["metric"], "paddle_matmul_fp16")

    def test_a_wrong_gpu_result_fails_whatever_run_check_printed(self):
        bad = gpu_checks(add=[0.0, 0.0, 0.0, 0.0], relu=[0.5, 0.5])
        bad[0]["expected"] = [1.0, 1.1428572, 1.2857143, 1.4285715]
        bad.append(check("conv2d", False, error="RuntimeError: CUDA error(209)"))
        r = probe.judge_paddle(gpu_info(checks=bad), "gpu", "12.6", [9, 0])
        self.assertEqual((r["status"], r["code"]), ("fail", "wrong_results"))
        self.assertEqual(r["run_check"]["works_on"], "gpu")
        self.assertIn("paddle computes wrong results on gpu:0: add got [0,0,0,0] want [1,1.1428572,1.2857143,1.4285715]; "
                      "relu got [0.5,0.5] want [1,2]; conv2d raised RuntimeError: CUDA error(209)", r["reason"])
        self.assertIn("sm_90", r["fix"])
        later = probe.describe_check(check("sum", False, max_abs_err=3.5))
        self.assertEqual(later, "sum got [1,2] want [1,2] (first values agree; max abs err 3.5)")

    def test_throughput_only_on_a_passing_fp16_matmul_check(self):
        r = probe.judge_paddle(gpu_info(checks=gpu_checks(matmul_fp16=[0.5])), "gpu", "12.6", [9, 0])
        self.assertEqual(r["code"], "wrong_results")
        self.assertNotIn("matmul", r)
        self.assertEqual(probe.metrics({"paddle": r}), [])
        w = [x for x in r["warnings"] if x["kind"] == "throughput_unverified"]
        self.assertEqual(len(w), 1)
        self.assertIn("matmul_fp16 result check on gpu:0 did not pass", w[0]["line"])
        cpu_only = gpu_info(checks=gpu_checks("cpu"), checks_device="cpu", gpu_count=0, run_check_output=CPU_RUN_CHECK,
                            matmul={"device": "cpu", "dtype": "float32", "n": 512, "tflops": 0.1})
        r = probe.judge_paddle(cpu_only, "cpu", None)
        self.assertEqual((r["status"], r["matmul"]["device"]), ("ok", "cpu"))  # gated on matmul_fp32 on cpu

    def test_missing_checks_on_a_gpu_do_not_pass(self):
        cases = {"no result checks on the GPU: the paddle child reported no result checks (an older probe": {"checks": []},
                 "could not run: ImportError: numpy": {"checks": [], "checks_error": "ImportError: numpy"},
                 "ran on cpu, not on the GPU (Paddle sees 0 GPUs)": {"checks": gpu_checks("cpu"), "gpu_count": 0},
                 "no result for conv2d (the paddle child exited -11)": {"checks": gpu_checks()[:-1], "exit": -11}}
        for needle, over in cases.items():
            r = probe.judge_paddle(gpu_info(**over), "gpu", "12.6", [9, 0])
            self.assertEqual((r["status"], r["code"]), ("fail", "no_result_checks"), needle)
            self.assertIn(needle, r["reason"])
            self.assertEqual("matmul" in r, needle.startswith("no result for conv2d"))  # its fp16 check passed
        older = gpu_info(checks=[], checks_planned=None)  # no GPU on this host: nothing to require
        self.assertEqual(probe.judge_paddle(dict(older, gpu_count=0), "gpu", "12.6", None)["status"], "ok")
        self.assertEqual(probe.judge_paddle(older, "cpu", None, [9, 0])["status"], "ok")  # a cpu image: not required

    def test_wrong_results_on_cpu_only_warn(self):
        info = gpu_info(checks=gpu_checks("cpu", add=[0.0]), gpu_count=0, run_check_output=CPU_RUN_CHECK, matmul=None)
        r = probe.judge_paddle(info, "cpu", None)
        self.assertEqual((r["status"], r["code"]), ("warn", "wrong_results_cpu"))
        self.assertIn("works well on 1 CPU, but computes wrong results on cpu: add got [0]", r["reason"])
        v = probe.verdict({"paddle": r}, "cpu")
        self.assertEqual(v["status"], "pass")
        self.assertIn("wrong results on cpu", v["warnings"][0])

    def test_unsupported_cc_line_fails_whatever_run_check_printed(self):
        line = ("W1127 16:28:36.333828   894 gpu_resources.cc:106] The GPU compute capability in your current machine "
                "is 90, which is not supported by Paddle, it is recommended to install the corresponding wheel package")
        r = probe.judge_paddle(gpu_info(run_check_output=line + "\n" + GPU_RUN_CHECK), "gpu", "11.8", [9, 0])
        self.assertEqual((r["status"], r["code"]), ("fail", "unsupported_cc"))
        self.assertIn("compute capability 9.0 is not supported", r["reason"])
        self.assertEqual([w["kind"] for w in r["warnings"]], ["unsupported_cc"])  # once, not once per copy
        self.assertIn("sm_90", r["fix"])
        self.assertEqual(r["evidence"], line.strip())

    def test_archs_without_this_gpu_fail_even_when_run_check_works(self):
        r = probe.judge_paddle(gpu_info(), "gpu", "11.8", [9, 0], "sm_61,sm_70,sm_75,sm_80,sm_86")
        self.assertEqual((r["status"], r["code"]), ("fail", "no_kernel_image"))
        self.assertEqual(probe.judge_paddle(gpu_info(), "gpu", "12.6", [9, 0], "sm_80,sm_90a")["status"], "ok")

    def test_parse_collects_check_records_in_order(self):
        out = "".join('@@IMGTOOL@@ %s\n' % json.dumps(x) for x in (
            {"python": "3.6.15"}, {"version": "2.6.2"}, {"checks_planned": ["add", "sum"]},
            {"check": check("add")}, {"check": check("sum", False)})) + '@@IMGTOOL@@ {"check": {"op": "re\n'
        info = probe.parse_paddle_output(-9, out)  # the last line cut by a kill
        self.assertEqual([c["op"] for c in info["checks"]], ["add", "sum"])
        self.assertEqual((info["python"], info["exit"]), ("3.6.15", -9))
        self.assertNotIn("check", info)


class PaddleScriptTest(unittest.TestCase):
    """The child script: valid for old pythons; run for real where a python with paddle is named
    (IMGTOOL_TEST_PADDLE_PYTHON=/venv/bin/python: a CPU paddlepaddle is enough)."""

    def test_it_compiles_and_carries_every_check(self):
        compile(probe.PADDLE_SCRIPT, "<paddle child>", "exec")
        for op in CHECK_OPS:
            self.assertIn('("%s", ' % op, probe.PADDLE_SCRIPT)

    def run_child(self, prelude=""):
        py = os.environ.get("IMGTOOL_TEST_PADDLE_PYTHON")
        if not py:
            self.skipTest("IMGTOOL_TEST_PADDLE_PYTHON not set (a python that imports paddle)")
        p = subprocess.run([py, "-c", prelude + probe.PADDLE_SCRIPT, "256", "64", str(1 << 20)], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
        return probe.parse_paddle_output(p.returncode, p.stdout)

    def test_real_paddle_on_cpu(self):
        info = self.run_child()
        self.assertEqual([c["op"] for c in info["checks"]], info["checks_planned"])
        for c in info["checks"]:
            self.assertTrue(c["ok"], c)
            self.assertEqual(c["device"], info["checks_device"])
        self.assertTrue(info["python"])
        r = probe.judge_paddle(info, "cpu", None)
        self.assertEqual(r["status"], "ok", r["reason"])

    def test_real_paddle_with_kernels_that_do_not_run(self):
        # paddle.add and relu answer zeros, as Paddle 2.6.2's did on an H100
        info = self.run_child("import paddle\npaddle.add = lambda x, y, name=None: paddle.zeros_like(x)\n"
                              "paddle.nn.functional.relu = lambda x, name=None: paddle.zeros_like(x) - 1\n")
        bad = dict((c["op"], c) for c in info["checks"] if not c["ok"])
        self.assertEqual(sorted(bad), ["add", "relu"])
        self.assertEqual(bad["add"]["found"], [0.0, 0.0, 0.0, 0.0])
        self.assertEqual(bad["add"]["expected"][:2], [1.0, 1.1428571939468384])


class MultiGpuAndCpuTest(unittest.TestCase):
    MULTI = ("Running verify PaddlePaddle program ... \nPaddlePaddle works well on 1 GPU.\n"
             "PaddlePaddle meets some problem with 4 GPUs. This may be caused by:\n"
             " 1. There is not enough GPUs visible on your system\n 2. Some GPUs are occupied by other process now\n"
             " 3. NVIDIA-NCCL2 is not installed correctly on your system. Please follow instruction on "
             "https://github.com/NVIDIA/nccl-tests \n to test your NCCL, or reinstall it following "
             "https://docs.nvidia.com/deeplearning/sdk/nccl-install-guide/index.html\n"
             "\n Original Error is: NCCL error(2), unhandled system error.\n"
             "PaddlePaddle is installed successfully ONLY for single GPU! Let's start deep learning with PaddlePaddle now.\n")

    def test_single_gpu_only_fails_on_a_multi_gpu_host(self):
        info = {"version": "2.6.2", "compiled_with_cuda": True, "run_check_output": self.MULTI, "output_tail": "",
                "exit": 0, "run_check_raised": "RuntimeError: NCCL error(2)"}
        r = probe.judge_paddle(info, "gpu", "11.8")
        self.assertEqual((r["status"], r["code"]), ("fail", "multi_gpu"))
        self.assertIn("failed on 4 GPUs (NCCL error(2), unhandled system error.)", r["reason"])
        self.assertIn("NCCL", r["fix"])
        self.assertEqual(probe.multi_gpu_failure(GPU_RUN_CHECK), "")

    def test_nccl_version_codes(self):
        self.assertEqual(probe.nccl_version_str(21803), "2.18.3")
        self.assertEqual(probe.nccl_version_str(2804), "2.8.4")

    def test_cpu_section_and_its_own_series(self):
        info = {"cpu_baseline": {"matmul_n": 1024, "matmul_GFLOPs": 55.5, "copy_bytes": 1 << 27, "copy_GBps": 9.25}}
        sec = probe.cpu_section(info)
        self.assertEqual(sec["status"], "ok")
        self.assertIn("55.5 GFLOP/s", sec["reason"])
        m = probe.metrics({"cpu": sec, "paddle": {"matmul": {"device": "cpu", "tflops": 0.05}}})
        self.assertEqual([(x["metric"], x["value"], x["unit"]) for x in m],
                         [("cpu_matmul_fp32", 55.5, "GFLOP/s"), ("cpu_bandwidth_copy", 9.25, "GB/s")])
        self.assertTrue(all(x["device"].startswith("cpu: ") for x in m))
        bad = probe.cpu_section({"cpu_baseline_error": "MemoryError: x"})
        self.assertEqual(bad["status"], "warn")
        self.assertIn("MemoryError", bad["reason"])
        self.assertEqual(probe.metrics({"cpu": bad}), [])

    def test_no_gpu_host_judges_a_gpu_image_up_to_the_driver(self):
        base = {"driver": {"status": "fail", "code": "no_gpus_flag", "reason": "libcuda.so.1 missing"},
                "kernels": {"status": "skipped", "reason": "x"},
                "paddle": {"status": "ok", "reason": "works on 1 CPU", "run_check": {"works_on": "cpu"}},
                "libraries": {"status": "ok", "reason": "cudart, cuBLAS and cuDNN found"}}
        self.assertEqual(probe.verdict(base, "gpu")["status"], "fail")  # without the flag: a GPU is required
        v = probe.verdict(base, "gpu", gpu_host="none")
        self.assertEqual(v["status"], "pass")
        self.assertIn("GPU part not run", v["warnings"][0])
        missing = dict(base, libraries={"status": "warn", "reason": "not found: cudnn"})
        v = probe.verdict(missing, "gpu", gpu_host="none")
        self.assertEqual(v["status"], "fail")
        self.assertIn("not found: cudnn", v["reasons"][0])
        cpu_only = dict(base, paddle={"status": "fail", "reason": "CPU-only Paddle build in a gpu image"})
        self.assertEqual(probe.verdict(cpu_only, "gpu", gpu_host="none")["status"], "fail")

    def on_test_double(self, name=probe.TEST_DOUBLE_NAME, **over):
        fake = {"device": 0, "name": name, "cc": [8, 0]}
        report = {"expect": {"cuda": "11.8"},
                  "driver": {"status": "ok", "name": name, "devices": [fake], "reason": "device 0"},
                  "compat": {"status": "fail", "reason": "cudaGetDeviceCount failed with error 36"},
                  "kernels": {"status": "ok", "reason": "saxpy correct"},
                  "blas": {"status": "fail", "reason": "cublasCreate failed"},
                  "libraries": {"status": "ok", "reason": "found"},
                  "paddle": {"status": "fail", "version": "2.6.2", "compiled_with_cuda": True, "cuda": "11.8",
                             "reason": "paddle.utils.run_check() failed"}}
        report.update(over)
        return probe.verdict(report, "gpu", gpu_host="test-double")

    def test_test_double_judges_what_the_double_serves_and_lists_the_rest(self):
        v = self.on_test_double()
        self.assertEqual(v["status"], "pass", v)
        self.assertIn("test double", v["gpu_part"])
        joined = " ".join(v["warnings"])
        for part in ("compat", "blas", "paddle on the GPU"):
            self.assertIn("not judged on the GPU test double: " + part, joined)
        # without the mode the same report fails (a real GPU is judged in full)
        self.assertEqual(probe.verdict({"driver": {"status": "ok"}, "blas": {"status": "fail", "reason": "x"}}, "gpu")["status"], "fail")

    def test_test_double_refused_on_real_hardware(self):
        v = self.on_test_double(name="NVIDIA H100 80GB HBM3")
        self.assertEqual(v["status"], "fail")
        self.assertIn("refused", v["reasons"][0])
        self.assertIn("NVIDIA H100", v["reasons"][0])
        mixed = {"status": "ok", "name": probe.TEST_DOUBLE_NAME,
                 "devices": [{"device": 0, "name": probe.TEST_DOUBLE_NAME}, {"device": 1, "name": "NVIDIA A100-SXM4-80GB"}]}
        v = self.on_test_double(driver=mixed)
        self.assertEqual(v["status"], "fail")
        self.assertIn("device 1", v["reasons"][0])

    def test_test_double_still_fails_what_it_can_judge(self):
        cases = {
            "kernels": {"kernels": {"status": "fail", "reason": "saxpy wrong"}},
            "libraries": {"libraries": {"status": "warn", "reason": "not found: cudnn"}},
            "CPU-only": {"paddle": {"status": "fail", "version": "2.6.2", "compiled_with_cuda": False,
                                    "reason": "CPU-only Paddle build in a gpu image"}},
            "claims CUDA 12.6": {"expect": {"cuda": "12.6"}},
            "import paddle failed": {"paddle": {"status": "fail", "reason": "import paddle failed: x"}},
            "driver": {"driver": {"status": "fail", "reason": "libcuda.so.1 missing"}},
        }
        for needle, over in cases.items():
            v = self.on_test_double(**over)
            self.assertEqual(v["status"], "fail", needle)
            self.assertIn(needle, " ".join(v["reasons"]), needle)

    def test_cpu_model(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix="cpuinfo", delete=False) as f:
            f.write("processor\t: 0\nmodel name\t: AMD EPYC  7B13 64-Core Processor\n")
        try:
            self.assertEqual(probe.cpu_model(f.name), "AMD EPYC 7B13 64-Core Processor")
        finally:
            os.unlink(f.name)


class VerdictTest(unittest.TestCase):
    def report(self, **over):
        r = {"driver": {"status": "ok"}, "compat": {"status": "ok"}, "kernels": {"status": "ok"},
             "blas": {"status": "ok"}, "shm": {"status": "ok"},
             "paddle": {"status": "ok", "run_check": {"works_on": "gpu"}}}
        r.update(over)
        return r

    def test_gpu_pass(self):
        self.assertEqual(probe.verdict(self.report(), "gpu")["status"], "pass")

    def test_gpu_needs_gpu_run_check(self):
        v = probe.verdict(self.report(paddle={"status": "ok", "run_check": {"works_on": "cpu"}}), "gpu")
        self.assertEqual(v["status"], "fail")

    def test_gpu_without_driver_fails_with_driver_reason_once(self):
        skipped = {"status": "skipped", "reason": "GPU part not run"}
        v = probe.verdict(self.report(driver={"status": "skipped", "reason": "no --gpus", "fix": "run with --gpus all"},
                                      kernels=skipped, blas=skipped, compat=skipped), "gpu")
        self.assertEqual(v["status"], "fail")
        self.assertEqual(len(v["reasons"]), 1)
        self.assertIn("no --gpus", v["reasons"][0])

    def test_cpu_pass_without_gpu_and_shm_is_a_warning(self):
        r = self.report(driver={"status": "skipped", "reason": "no --gpus"},
                        shm={"status": "warn", "reason": "small", "fix": "--shm-size 2g"},
                        paddle={"status": "ok", "run_check": {"works_on": "cpu"}})
        v = probe.verdict(r, "cpu")
        self.assertEqual(v["status"], "pass")
        self.assertEqual(len(v["warnings"]), 1)

    def test_unknown_variant_fails(self):
        self.assertEqual(probe.verdict(self.report(), None)["status"], "fail")

    def test_skipped_paddle_on_a_gpu_is_not_a_hardware_pass(self):
        skipped = {"status": "skipped", "reason": "--skip-paddle"}
        v = probe.verdict(self.report(paddle=skipped), "gpu")
        self.assertEqual((v["status"], v["reasons"]), ("fail", ["paddle skipped: not a hardware pass of this image"]))
        # elsewhere as before: a skipped paddle fails with its own reason
        v = probe.verdict(self.report(paddle=skipped, driver={"status": "skipped", "reason": "no --gpus"}), "gpu")
        self.assertEqual(v["reasons"], ["paddle: --skip-paddle", "driver: no --gpus"])
        self.assertEqual(probe.verdict(self.report(paddle=skipped), "cpu")["reasons"], ["paddle: --skip-paddle"])
        v = probe.verdict(self.report(paddle=skipped, driver={"status": "fail", "reason": "x"}), "gpu", gpu_host="none")
        self.assertEqual(v["status"], "fail")


class NonceAndDocumentTest(unittest.TestCase):
    def test_nonce_rules(self):
        self.assertEqual(probe.check_nonce("run-42 x:y/z~"), ("run-42 x:y/z~", None))
        self.assertEqual(probe.check_nonce("a" * 128), ("a" * 128, None))
        self.assertEqual(probe.check_nonce(""), (None, None))
        self.assertEqual(probe.check_nonce(None), (None, None))
        for bad in ("a" * 129, "tab\there", "new\nline", "caf\u00e9", "\x7f"):
            nonce, why = probe.check_nonce(bad)
            self.assertIsNone(nonce, bad)
            self.assertTrue(why, bad)

    def refused(self, args, env):
        e = dict(os.environ, **env)
        p = subprocess.run([sys.executable, os.path.join(HERE, "probe.py")] + args, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, universal_newlines=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stdout, "")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        return p.stderr

    def test_a_bad_nonce_is_refused_before_anything_runs(self):
        self.assertIn("at most 128", self.refused(["--nonce", "n" * 200], {}))
        self.assertIn("printable ASCII", self.refused([], {"IMGTOOL_PROBE_NONCE": "a\x01b"}))

    def test_document_between_sentinels(self):
        report = {"probe": {"version": 2}, "paddle": {"reason": "line\n-----END IMGTOOL PROBE DOCUMENT-----"}}
        text = "noise {not json}\n" + probe.document_text(report) + "more noise\n"
        lines = text.splitlines()
        self.assertEqual(lines[1], "-----BEGIN IMGTOOL PROBE DOCUMENT-----")
        self.assertEqual(lines[-2], "-----END IMGTOOL PROBE DOCUMENT-----")
        self.assertEqual(probe.extract_document(text), report)
        self.assertIsNone(probe.extract_document("{}"))
        self.assertIsNone(probe.extract_document("%s\n{cut\n%s\n" % (probe.DOC_BEGIN, probe.DOC_END)))
        self.assertIsNone(probe.extract_document(probe.DOC_END + "\n{}\n" + probe.DOC_BEGIN + "\n"))


class IdentityTest(unittest.TestCase):
    def setUp(self):
        import tempfile
        self.dir = tempfile.mkdtemp(prefix="probe-identity-")
        self.path = os.path.join(self.dir, "identity.json")

    def tearDown(self):
        import shutil
        shutil.rmtree(self.dir, ignore_errors=True)

    def write(self, data):
        with open(self.path, "wb") as f:
            f.write(data)
        return probe.identity_section(self.path)

    def test_a_generator_identity(self):
        import hashlib
        data = json.dumps({"tag": "3.2.0-gpu-cuda12.6-py311", "inputs_hash": "sha256:" + "ab" * 32, "kb_version": "7",
                           "claims": {"paddle": "3.2.0", "python": "3.11", "variant": "gpu", "cuda": "12.6",
                                      "cudnn": "9.5", "cuda_archs": "sm_80,sm_90"}}).encode()
        r = self.write(data)
        self.assertEqual(r["sha256"], hashlib.sha256(data).hexdigest())
        self.assertEqual(r["document"]["claims"]["cuda_archs"], "sm_80,sm_90")
        self.assertEqual(r["path"], self.path)
        self.assertNotIn("error", r)

    def test_missing_and_errors(self):
        self.assertEqual(probe.identity_section(self.path), {"path": self.path, "missing": True})
        for data, needle in ((b"[1, 2]", "not a JSON object (a list)"), (b"{", "not JSON"),
                             (b'{"a": NaN}', "not JSON"), (b"\xff\xfe{}", "not JSON"),
                             (b" " * (64 << 10) + b"{}", "larger than 64 KiB")):
            r = self.write(data)
            self.assertEqual(set(r), {"path", "error"}, data[:20])
            self.assertIn(needle, r["error"])
        self.assertEqual(probe.identity_section(self.dir)["error"], "not a regular file")
        self.assertIn("document", self.write(b" " * ((64 << 10) - 2) + b"{}"))  # exactly 64 KiB


class H100ReplayTest(unittest.TestCase):
    """The recorded H100 run (testdata/README.md): PyPI's paddlepaddle-gpu 2.6.2 (sm_61..sm_86, no PTX)
    on an H100 printed "works well on 1 GPU" and the probe said pass; with its results it fails."""

    @classmethod
    def setUpClass(cls):
        with open(os.path.join(HERE, "testdata", "paddle262-on-h100-probe.json")) as f:
            cls.doc = json.load(f)
        with open(os.path.join(HERE, "testdata", "paddle262-on-h100-checks.json")) as f:
            cls.recorded = json.load(f)

    def child_output(self, checks=True, warning_lines=True):
        """The child's stdout as probe 2 would have read it in that run."""
        p = self.doc["paddle"]
        rc = p["run_check"]["output"]
        if not warning_lines:
            rc = "\n".join(l for l in rc.splitlines() if "gpu_resources.cc:1" not in l)
        rec = lambda **kv: "@@IMGTOOL@@ %s\n" % json.dumps(kv)
        out = rec(python=self.doc["environment"]["python"]) + rec(version=p["version"], compiled_with_cuda=True,
                                                                  cuda=p["cuda"], cudnn=p["cudnn"])
        out += rec(gpu_count=p["gpu_count"]) + "@@RUN_CHECK_BEGIN@@\n" + rc + "\n"
        out += rec(run_check_raised=None) + "@@RUN_CHECK_END@@\n"
        if checks:
            out += rec(checks_device="gpu:0", checks_planned=[c["op"] for c in self.recorded["checks"]])
            out += "".join(rec(check=c) for c in self.recorded["checks"])
        return out + rec(matmul=p["matmul"])

    def judge(self, archs=None, **kw):
        info = probe.parse_paddle_output(0, self.child_output(**kw))
        return probe.judge_paddle(info, "gpu", "11.8", self.doc["driver"]["cc"], archs)

    def test_the_recorded_document_said_pass(self):
        self.assertEqual(self.doc["verdict"]["status"], "pass")
        self.assertEqual(self.doc["paddle"]["run_check"]["works_on"], "gpu")
        kinds = [w["kind"] for w in probe.paddle_warnings("\n".join(self.recorded["warning_lines"]))]
        self.assertEqual(kinds, ["unsupported_cc"])  # the line the recorded document let pass

    def test_judge_paddle_fails_it(self):
        r = self.judge()
        self.assertEqual((r["status"], r["code"]), ("fail", "unsupported_cc"))
        self.assertEqual([f["code"] for f in r["failures"]], ["unsupported_cc", "wrong_results"])
        self.assertIn("add got [0,0,0,0] want [1,1.1428572,1.2857143,1.4285715]", r["reason"])
        for op in ("relu", "sum", "matmul_fp16", "randn_moments"):
            self.assertIn(op + " got", r["reason"])
        for op in ("matmul_fp32 got", "conv2d got"):
            self.assertNotIn(op, r["reason"])  # cuBLAS fp32 and cuDNN did run
        self.assertNotIn("matmul", r)  # its 836 TFLOP/s rests on a wrong fp16 matmul
        self.assertEqual(r["python"], "3.12.3")
        only_results = self.judge(warning_lines=False)
        self.assertEqual(only_results["code"], "wrong_results")
        with_archs = self.judge(archs=self.doc["expect"]["archs"])
        self.assertEqual([f["code"] for f in with_archs["failures"]], ["no_kernel_image", "unsupported_cc", "wrong_results"])
        self.assertEqual(self.judge(checks=False)["code"], "unsupported_cc")
        no_checks = self.judge(checks=False, warning_lines=False)
        self.assertEqual(no_checks["code"], "no_result_checks")  # what an older child says, on a GPU

    def test_the_recorded_document_rejudged_fails(self):
        doc = json.loads(json.dumps(self.doc))
        doc["paddle"] = self.judge(archs=doc["expect"]["archs"])
        doc["metrics"] = probe.metrics(doc)
        v = probe.verdict(doc, doc["expect"]["variant"])
        self.assertEqual(v["status"], "fail")
        self.assertEqual(len(v["reasons"]), 1)
        self.assertTrue(v["reasons"][0].startswith("paddle: Paddle has no kernels for compute capability 9.0"))
        self.assertIn("paddle computes wrong results on gpu:0", v["reasons"][0])
        self.assertNotIn("paddle_matmul_fp16", [m["metric"] for m in doc["metrics"]])
        self.assertIn("gemm_fp16", [m["metric"] for m in doc["metrics"]])  # the probe's own cuBLAS run stays


class WholeProbeTest(unittest.TestCase):
    """The probe as the image runs it, on this GPU-less host."""

    def run_probe(self, *args, **extra_env):
        env = {k: v for k, v in os.environ.items() if not k.startswith("NVIDIA_")}
        env.update(extra_env)
        p = subprocess.run([sys.executable, os.path.join(HERE, "probe.py"), "--skip-paddle"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.stdout = p.stdout
        return probe.extract_document(p.stdout)

    def test_json_shape_and_no_libcuda_diagnosis(self):
        if os.path.exists("/dev/nvidiactl"):
            self.skipTest("this host has a GPU")
        r = self.run_probe("--expect-variant", "gpu", "--expect-cuda", "12.6", "--gpus-requested", "none")
        for key in ("probe", "environment", "shm", "libraries", "driver", "compat", "kernels", "blas", "paddle",
                    "metrics", "verdict", "expect"):
            self.assertIn(key, r)
        for key in ("driver", "compat", "kernels", "blas", "shm", "libraries", "paddle"):
            self.assertIn(r[key]["status"], ("ok", "warn", "fail", "skipped"), key)
            self.assertTrue(r[key]["reason"], key)
        self.assertEqual(r["driver"]["code"], "no_gpus_flag")
        self.assertIn("libcuda.so.1", r["driver"]["reason"])
        self.assertEqual(r["kernels"]["status"], "skipped")
        self.assertEqual(r["verdict"]["status"], "fail")
        self.assertEqual(r["expect"], {"variant": "gpu", "cuda": "12.6", "cuda_source": "argument/IMGTOOL_EXPECT_CUDA", "archs": None})
        self.assertEqual((r["probe"]["version"], r["probe"]["nonce"]), (probe.PROBE_VERSION, None))

    def test_sentinels_nonce_and_identity(self):
        import tempfile
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
            f.write('{"tag": "t", "claims": {"variant": "gpu"}}')
        try:
            r = self.run_probe("--expect-variant", "cpu", "--nonce", "nonce 0123-abcd", IMGTOOL_IDENTITY_FILE=f.name,
                               IMGTOOL_PROBE_NONCE="the argument wins")
        finally:
            os.unlink(f.name)
        lines = self.stdout.splitlines()
        self.assertEqual((lines[0], lines[-1]), (probe.DOC_BEGIN, probe.DOC_END))  # nothing else on stdout
        self.assertEqual(json.loads("\n".join(lines[1:-1])), r)
        self.assertEqual(r["probe"]["nonce"], "nonce 0123-abcd")
        self.assertEqual(r["identity"]["document"], {"tag": "t", "claims": {"variant": "gpu"}})
        self.assertEqual(len(r["identity"]["sha256"]), 64)


class FakeDriverTest(unittest.TestCase):
    """The driver section against testdata/fake_libcuda.c (compiled here; skipped without a C compiler)."""

    @classmethod
    def setUpClass(cls):
        import shutil
        import tempfile
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            raise unittest.SkipTest("no C compiler for the fake libcuda")
        cls.dir = tempfile.mkdtemp(prefix="fake-libcuda-")
        subprocess.check_call([cc, "-O2", "-shared", "-fPIC", "-o", os.path.join(cls.dir, "libcuda.so.1"),
                               os.path.join(HERE, "testdata", "fake_libcuda.c")])

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_probe(self, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith("NVIDIA_")}
        e.update(env, LD_LIBRARY_PATH=self.dir, IMGTOOL_PROBE_NONCE="fake-driver run")
        p = subprocess.run([sys.executable, os.path.join(HERE, "probe.py"), "--skip-paddle", "--expect-variant", "gpu",
                            "--expect-cuda", "12.6", "--gpus-requested", "all"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = probe.extract_document(p.stdout)
        self.assertEqual(doc["probe"]["nonce"], "fake-driver run")  # from the environment
        return doc

    def test_device_info_and_jit_failure(self):
        r = self.run_probe(FAKE_CUDA_JIT_ERROR="221")
        d = r["driver"]
        self.assertEqual(d["status"], "ok", d)
        self.assertEqual((d["name"], d["cc"], d["sm_count"], d["driver_cuda"]), ("imgtool fake GPU (test double, not hardware)", [9, 0], 132, "12.4"))
        self.assertAlmostEqual(d["peak_bandwidth_GBps"], 3352.3, places=1)
        rt = r["libraries"].get("cudart_runtime")
        if rt and rt["status"] == "fail":
            # A GPU host: the host's real cudart (13.x on the lent H100) was found and asked the
            # double's 12.4 driver for devices; it answers error 35, which outranks the warning.
            self.assertEqual(r["compat"]["code"], "driver_too_old", r["compat"])
            self.assertIn("error 35", r["compat"]["reason"])
        else:
            self.assertEqual(r["compat"]["code"], "minor_version_compat")
        k = r["kernels"]
        self.assertEqual((k["status"], k["cuda_error"]), ("fail", 221))
        self.assertIn("CUDA_ERROR_JIT_COMPILER_NOT_FOUND", k["reason"])
        self.assertIn("ptxjitcompiler", k["jit_log"])
        self.assertEqual(r["verdict"]["status"], "fail")

    def test_kernels_run_and_metrics_are_filed_under_the_doubles_name(self):
        # The double runs the probe's PTX kernels on the host CPU: the whole kernels path runs
        # (module load, launches, copies, the saxpy check, event timing) and its bandwidth is
        # the host's, under a device name no one can mistake for hardware.
        r = self.run_probe()
        k = r["kernels"]
        self.assertEqual(k["status"], "ok", k)
        self.assertTrue(k["saxpy"]["ok"])
        self.assertLessEqual(k["saxpy"]["max_abs_err"], 1e-5)
        self.assertGreater(k["bandwidth"]["copy_GBps"], 0)
        self.assertGreater(k["bandwidth"]["triad_GBps"], 0)
        self.assertEqual(k["bandwidth"]["array_bytes"], 256 << 20)  # max(256 MiB, 8 x L2) within the free 1 GiB / 4
        gpu_metrics = [m for m in r["metrics"] if m["metric"] in ("bandwidth_copy", "bandwidth_triad")]
        self.assertEqual(len(gpu_metrics), 2, r["metrics"])
        self.assertEqual(r["driver"]["name"], "imgtool fake GPU (test double, not hardware)")
        self.assertTrue(all(m.get("device") in (None, r["driver"]["name"]) for m in gpu_metrics), gpu_metrics)

    def test_unknown_kernel_name_is_not_found(self):
        import ctypes
        lib = ctypes.CDLL(os.path.join(self.dir, "libcuda.so.1"))
        mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
        ptx = b".version 8.0\n.target sm_90\n.visible .entry saxpy(.param .u64 p)\n"
        self.assertEqual(lib.cuModuleLoadDataEx(ctypes.byref(mod), ptx, 0, None, None), 0)
        self.assertEqual(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"saxpy"), 0)
        self.assertEqual(lib.cuModuleGetFunction(ctypes.byref(fn), mod, b"copy_v4"), 500)  # not in this PTX
        self.assertEqual(lib.cuModuleLoadDataEx(ctypes.byref(mod), b"garbage", 0, None, None), 200)

    def test_every_visible_device_is_listed_and_checked(self):
        r = self.run_probe(FAKE_CUDA_DEVICES="3")
        self.assertEqual([d["device"] for d in r["driver"]["devices"]], [0, 1, 2])
        self.assertIn("3 devices visible", r["driver"]["reason"])

    def test_driver_too_old(self):
        r = self.run_probe(FAKE_CUDA_DRIVER="11040")
        self.assertEqual(r["compat"]["code"], "driver_too_old")
        self.assertIn("CUDA 11.4", r["compat"]["reason"])
        self.assertTrue(any("driver older than the image's CUDA needs" in x for x in r["verdict"]["reasons"]))

    def test_init_803(self):
        r = self.run_probe(FAKE_CUDA_INIT="803")
        self.assertEqual((r["driver"]["status"], r["driver"]["code"]), ("fail", "driver_mismatch"))
        self.assertEqual(r["kernels"]["status"], "skipped")
        self.assertTrue(any("unsupported display driver" in x for x in r["verdict"]["reasons"]))



class RunSettingsTest(unittest.TestCase):
    """Run-profile promises: memlock/stack/shm/user read back, each below-promise item with its fix."""

    def test_limits(self):
        self.assertEqual(probe.judge_limit("memlock", -1, -1)["status"], "ok")
        low = probe.judge_limit("memlock", 8 << 20, -1)
        self.assertEqual(low["status"], "warn")
        self.assertIn("below the profile's unlimited", low["reason"])
        self.assertIn("--ulimit memlock=-1", low["fix"])
        self.assertEqual(probe.judge_limit("stack", 64 << 20, 67108864)["status"], "ok")
        self.assertIn("--ulimit stack=67108864", probe.judge_limit("stack", 8 << 20, 67108864)["fix"])
        self.assertEqual(probe.judge_limit("shm", 64 << 20, None)["status"], "ok")
        self.assertIn("--shm-size", probe.judge_limit("shm", 64 << 20, 8 << 30)["fix"])

    def test_user(self):
        self.assertEqual(probe.judge_user(1000, 1000, "1000:1000")["status"], "ok")
        self.assertEqual(probe.judge_user(1000, 5, "1000")["status"], "ok")
        root = probe.judge_user(0, 0, "1000:1000")
        self.assertEqual(root["status"], "warn")
        self.assertIn("--user", root["fix"])
        # No profile promise: root is reported, not judged (a plain `imgtool smoke` has no profile).
        unpromised = probe.judge_user(0, 0, None)
        self.assertEqual(unpromised["status"], "ok")
        self.assertIn("root", unpromised["reason"])

    def test_section_reads_this_process(self):
        args = probe.parse_args(["--expect-memlock", "-1", "--expect-stack", "1", "--expect-shm", "1"])
        sec = probe.run_settings_section(args)
        self.assertIn(sec["status"], ("ok", "warn"))
        self.assertEqual(sec["stack"]["promised"], 1)
        self.assertEqual(sec["user"]["uid"], os.getuid())

if __name__ == "__main__":
    unittest.main()


class DeviceUuidTest(unittest.TestCase):
    """cuDeviceGetUuid's 16 bytes in nvidia-smi's form; None on a driver without the entry point."""

    def test_nvidia_smi_form(self):
        class D(object):
            def cuDeviceGetUuid(self, buf, dev):
                for i, b in enumerate(bytes.fromhex("5f0c8b7e1d2a4c3b9e8f0a1b2c3d4e5f")):
                    buf[i] = b
        self.assertEqual(probe.device_uuid(D(), 0), "GPU-5f0c8b7e-1d2a-4c3b-9e8f-0a1b2c3d4e5f")

    def test_missing_entry_point(self):
        class D(object):
            def __getattr__(self, name):
                raise AttributeError(name)
        self.assertIsNone(probe.device_uuid(D(), 0))
