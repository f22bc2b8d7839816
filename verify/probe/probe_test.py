"""Unit tests for probe.py with the host python3 and no GPU.

Decision functions get injected values; the whole probe runs once as a
subprocess to check the JSON shape and the no-libcuda diagnosis.
Run: python3 -m unittest discover -s verify/probe -p '*_test.py'
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


class WholeProbeTest(unittest.TestCase):
    """The probe as the image runs it, on this GPU-less host."""

    def run_probe(self, *args):
        env = {k: v for k, v in os.environ.items() if not k.startswith("NVIDIA_")}
        p = subprocess.run([sys.executable, os.path.join(HERE, "probe.py"), "--skip-paddle"] + list(args),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

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
        self.assertEqual(r["expect"], {"variant": "gpu", "cuda": "12.6", "cuda_source": "argument/IMGTOOL_EXPECT_CUDA"})


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
        subprocess.check_call([cc, "-shared", "-fPIC", "-o", os.path.join(cls.dir, "libcuda.so.1"),
                               os.path.join(HERE, "testdata", "fake_libcuda.c")])

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.dir, ignore_errors=True)

    def run_probe(self, **env):
        e = {k: v for k, v in os.environ.items() if not k.startswith("NVIDIA_")}
        e.update(env, LD_LIBRARY_PATH=self.dir)
        p = subprocess.run([sys.executable, os.path.join(HERE, "probe.py"), "--skip-paddle", "--expect-variant", "gpu",
                            "--expect-cuda", "12.6", "--gpus-requested", "all"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, universal_newlines=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def test_device_info_and_jit_failure(self):
        r = self.run_probe()
        d = r["driver"]
        self.assertEqual(d["status"], "ok", d)
        self.assertEqual((d["name"], d["cc"], d["sm_count"], d["driver_cuda"]), ("Fake GPU 80GB", [9, 0], 132, "12.4"))
        self.assertAlmostEqual(d["peak_bandwidth_GBps"], 3352.3, places=1)
        self.assertEqual(r["compat"]["code"], "minor_version_compat")
        k = r["kernels"]
        self.assertEqual((k["status"], k["cuda_error"]), ("fail", 221))
        self.assertIn("CUDA_ERROR_JIT_COMPILER_NOT_FOUND", k["reason"])
        self.assertIn("ptxjitcompiler", k["jit_log"])
        self.assertEqual(r["verdict"]["status"], "fail")

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


if __name__ == "__main__":
    unittest.main()
