/* A stand-in libcuda.so.1 for probe_test.py on GPU-less hosts: enough of the
 * driver API for probe.py's driver section. Behaviour from the environment:
 *   FAKE_CUDA_INIT    cuInit's return code (default 0)
 *   FAKE_CUDA_DRIVER  cuDriverGetVersion's value (default 12040 = CUDA 12.4)
 *   FAKE_CUDA_DEVICES cuDeviceGetCount's value (default 1)
 * Its device name says what it is, so its throughput series (none: nothing runs)
 * can never be mistaken for hardware. The test engine's nvidia-container-runtime-hook
 * double (tests/gpu_engine/) puts this library into containers started with --gpus.
 * cuModuleLoadDataEx always fails with 221 (JIT compiler not found) after
 * writing a log line, so the kernels section exercises its error path. */
#include <stdlib.h>
#include <string.h>

static int env_int(const char* name, int dflt) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}
int cuInit(unsigned flags) { return env_int("FAKE_CUDA_INIT", 0); }
int cuDriverGetVersion(int* v) { *v = env_int("FAKE_CUDA_DRIVER", 12040); return 0; }
int cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetCount(int* n) { *n = env_int("FAKE_CUDA_DEVICES", 1); return 0; }
int cuDeviceGetName(char* name, int len, int dev) {
  strncpy(name, "imgtool fake GPU (test double, not hardware)", len);
  return 0;
}
int cuDeviceGetAttribute(int* v, int attr, int dev) {
  switch (attr) {
    case 16: *v = 132; break;           /* SMs */
    case 36: *v = 2619000; break;       /* memory clock kHz */
    case 37: *v = 5120; break;          /* bus width */
    case 38: *v = 50 << 20; break;      /* L2 */
    case 75: *v = 9; break;
    case 76: *v = 0; break;
    default: *v = 0;
  }
  return 0;
}
int cuDeviceTotalMem_v2(size_t* b, int dev) { *b = (size_t)80 << 30; return 0; }
int cuDevicePrimaryCtxRetain(void** ctx, int dev) { *ctx = (void*)1; return 0; }
int cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
int cuCtxSetCurrent(void* ctx) { return 0; }
int cuModuleLoadDataEx(void** mod, const char* ptx, unsigned n, int* opts, void** vals) {
  for (unsigned i = 0; i < n; ++i)
    if (opts[i] == 5) strcpy((char*)vals[i], "fake: ptxjitcompiler not present");
  return 221;
}
int cuGetErrorName(int code, const char** s) { *s = code == 221 ? "CUDA_ERROR_JIT_COMPILER_NOT_FOUND" : "CUDA_ERROR_FAKE"; return 0; }
int cuGetErrorString(int code, const char** s) { *s = "fake error text"; return 0; }
