/* A stand-in libcuda.so.1 for GPU-less hosts (probe_test.py, and the test engine's
 * nvidia-container-runtime-hook double in tests/gpu_engine/, which puts this library into
 * containers started with --gpus). It implements the driver API calls probe.py makes and
 * EXECUTES the probe's kernels on the host CPU: "device" memory is host memory, a launch runs
 * the named kernel's loop over all n elements, events read CLOCK_MONOTONIC. So the kernels
 * section's real code path runs end to end (module load, launch, copies back, the saxpy check,
 * event timing) and its throughput is the host's memory bandwidth, recorded under the device
 * name below: a series no one can mistake for hardware, and no KB peak matches it (no floor).
 *
 * Behaviour from the environment:
 *   FAKE_CUDA_INIT       cuInit's return code (default 0)
 *   FAKE_CUDA_DRIVER     cuDriverGetVersion's value (default 12040 = CUDA 12.4)
 *   FAKE_CUDA_DEVICES    cuDeviceGetCount's value (default 1)
 *   FAKE_CUDA_JIT_ERROR  when set (e.g. 221), cuModuleLoadDataEx fails with that code after
 *                        writing a log line (the kernels section's error path)
 *   FAKE_CUDA_FREE_MIB   what cuMemGetInfo_v2 reports free (default 1024)
 * The PTX is checked, not compiled: it must carry .version, .target and a .entry for every
 * function asked for; an unknown function name is CUDA_ERROR_NOT_FOUND (500), as the driver says.
 * The CUDA runtime (libcudart) needs private driver entry points this double does not have,
 * so cudart-based calls (cuBLAS, Paddle's GPU path) still fail against it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_NAME "imgtool fake GPU (test double, not hardware)"
enum { OK = 0, INVALID_VALUE = 1, OUT_OF_MEMORY = 2, INVALID_IMAGE = 200, NOT_FOUND = 500 };

static int env_int(const char* name, int dflt) {
  const char* v = getenv(name);
  return v && *v ? atoi(v) : dflt;
}
int cuInit(unsigned flags) { return env_int("FAKE_CUDA_INIT", 0); }
int cuDriverGetVersion(int* v) { *v = env_int("FAKE_CUDA_DRIVER", 12040); return 0; }
int cuDeviceGet(int* d, int ordinal) { *d = ordinal; return 0; }
int cuDeviceGetCount(int* n) { *n = env_int("FAKE_CUDA_DEVICES", 1); return 0; }
int cuDeviceGetName(char* name, int len, int dev) {
  strncpy(name, FAKE_NAME, len);
  return 0;
}
/* A UUID no real GPU has: 16 bytes 0x1d (imgtool's double), the device ordinal in the last. */
int cuDeviceGetUuid(unsigned char* uuid, int dev) {
  memset(uuid, 0x1d, 16);
  uuid[15] = (unsigned char)dev;
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
int cuCtxSynchronize(void) { return 0; }
int cuGetErrorName(int code, const char** s) {
  *s = code == 221 ? "CUDA_ERROR_JIT_COMPILER_NOT_FOUND" : code == 500 ? "CUDA_ERROR_NOT_FOUND" : "CUDA_ERROR_FAKE";
  return 0;
}
int cuGetErrorString(int code, const char** s) { *s = "fake error text"; return 0; }

/* ---- memory: device pointers are host pointers ---- */
int cuMemAlloc_v2(uint64_t* p, size_t n) {
  void* m = malloc(n ? n : 1);
  if (!m) return OUT_OF_MEMORY;
  *p = (uint64_t)(uintptr_t)m;
  return OK;
}
int cuMemFree_v2(uint64_t p) { free((void*)(uintptr_t)p); return OK; }
int cuMemGetInfo_v2(size_t* free_b, size_t* total) {
  *free_b = (size_t)env_int("FAKE_CUDA_FREE_MIB", 1024) << 20;
  *total = (size_t)80 << 30;
  return OK;
}
int cuMemcpyHtoD_v2(uint64_t dst, const void* src, size_t n) { memcpy((void*)(uintptr_t)dst, src, n); return OK; }
int cuMemcpyDtoH_v2(void* dst, uint64_t src, size_t n) { memcpy(dst, (const void*)(uintptr_t)src, n); return OK; }

/* ---- kernels: the probe's PTX kernels (probe.py _KERNELS), run on the host ---- */
static float fill_value(uint64_t i, uint32_t seed) { /* probe.py fill_value() */
  uint32_t h = ((uint32_t)i * 0x9E3779B1u) ^ seed;
  return (float)((h >> 16) & 1023) * (1.0f / 1024.0f) - 0.5f;
}
static uint16_t to_half(float f) { /* round-to-nearest for the fill range [-0.5, 0.5) */
  _Float16 h = (_Float16)f;
  uint16_t b;
  memcpy(&b, &h, 2);
  return b;
}
#define ARG(T, k) (*(T*)params[k])
#define PTR(T, k) ((T*)(uintptr_t)ARG(uint64_t, k))
static void k_saxpy(void** params) {
  float *y = PTR(float, 0), *x = PTR(float, 1), a = ARG(float, 2);
  for (uint64_t i = 0, n = ARG(uint64_t, 3); i < n; ++i) y[i] = a * x[i] + y[i];
}
static void k_copy_v4(void** params) { memcpy(PTR(float, 0), PTR(float, 1), 16 * ARG(uint64_t, 2)); }
static void k_triad_v4(void** params) {
  float *a = PTR(float, 0), *b = PTR(float, 1), *c = PTR(float, 2), s = ARG(float, 3);
  for (uint64_t i = 0, n = 4 * ARG(uint64_t, 4); i < n; ++i) a[i] = s * c[i] + b[i];
}
static void k_fill_f32(void** params) {
  float* d = PTR(float, 0);
  uint32_t seed = ARG(uint32_t, 2);
  for (uint64_t i = 0, n = ARG(uint64_t, 1); i < n; ++i) d[i] = fill_value(i, seed);
}
static void k_fill_f16(void** params) {
  uint16_t* d = PTR(uint16_t, 0);
  uint32_t seed = ARG(uint32_t, 2);
  for (uint64_t i = 0, n = ARG(uint64_t, 1); i < n; ++i) d[i] = to_half(fill_value(i, seed));
}
typedef void (*kernel_fn)(void**);
static const struct { const char* name; kernel_fn fn; } kKernels[] = {
    {"saxpy", k_saxpy},       {"copy_v4", k_copy_v4},   {"triad_v4", k_triad_v4},
    {"fill_f32", k_fill_f32}, {"fill_f16", k_fill_f16},
};
#define N_KERNELS (sizeof kKernels / sizeof kKernels[0])

struct module { char* ptx; };

int cuModuleLoadDataEx(void** mod, const char* ptx, unsigned n, int* opts, void** vals) {
  int jit_error = env_int("FAKE_CUDA_JIT_ERROR", 0);
  if (jit_error) {
    for (unsigned i = 0; i < n; ++i)
      if (opts[i] == 5) strcpy((char*)vals[i], "fake: ptxjitcompiler not present");
    return jit_error;
  }
  if (!ptx || !strstr(ptx, ".version") || !strstr(ptx, ".target sm_")) return INVALID_IMAGE;
  struct module* m = malloc(sizeof *m);
  m->ptx = strdup(ptx);
  *mod = m;
  return OK;
}
int cuModuleUnload(void* mod) {
  struct module* m = mod;
  if (m) free(m->ptx);
  free(m);
  return OK;
}
int cuModuleGetFunction(void** fn, void* mod, const char* name) {
  struct module* m = mod;
  char entry[128];
  snprintf(entry, sizeof entry, ".entry %s(", name);
  if (!m || !strstr(m->ptx, entry)) return NOT_FOUND;
  for (size_t i = 0; i < N_KERNELS; ++i)
    if (!strcmp(kKernels[i].name, name)) {
      *fn = (void*)&kKernels[i];
      return OK;
    }
  return NOT_FOUND;
}
int cuLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                   unsigned shared, void* stream, void** params, void** extra) {
  if (!f || !params) return INVALID_VALUE;
  /* The probe's kernels are grid-stride loops: any grid covers all n elements. */
  ((const __typeof__(kKernels[0])*)f)->fn(params);
  return OK;
}

/* ---- events: wall clock; launches are synchronous ---- */
int cuEventCreate(void** e, unsigned flags) { *e = calloc(1, sizeof(struct timespec)); return OK; }
int cuEventRecord(void* e, void* stream) { clock_gettime(CLOCK_MONOTONIC, e); return OK; }
int cuEventSynchronize(void* e) { return OK; }
int cuEventElapsedTime(float* ms, void* start, void* end) {
  const struct timespec *a = start, *b = end;
  *ms = (float)((b->tv_sec - a->tv_sec) * 1e3 + (b->tv_nsec - a->tv_nsec) / 1e6);
  return OK;
}
int cuEventDestroy_v2(void* e) { free(e); return OK; }
