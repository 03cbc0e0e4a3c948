// Programmatic dependent launch (PDL) on a chain of dependent kernels: does it cut the gap
// between a short kernel and the next? Modes: 0 plain launches, 1 PDL attribute + wait at the
// kernel's start, 2 PDL + wait + trigger at the start. Direct launches and a captured graph.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__global__ void step(float* x, int n, int mode) {
  if (mode >= 1) cudaGridDependencySynchronize();
  if (mode == 2) cudaTriggerProgrammaticLaunchCompletion();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x[i] = x[i] * 1.0001f + 1.0f;
}

static void launch(cudaStream_t s, float* x, int n, int blocks, int mode) {
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(blocks); cfg.blockDim = dim3(256); cfg.stream = s;
  cudaLaunchAttribute at[1];
  at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  at[0].val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = at; cfg.numAttrs = mode >= 1 ? 1 : 0;
  CK(cudaLaunchKernelEx(&cfg, step, x, n, mode));
}

int main(int argc, char** argv) {
  int small = 20000, large = atoi(argc > 1 ? argv[1] : "5000000"), steps = 2000;
  float *a, *b; CK(cudaMalloc(&a, small * 4)); CK(cudaMalloc(&b, large * 4));
  CK(cudaMemset(a, 0, small * 4)); CK(cudaMemset(b, 0, large * 4));
  // argv[2] == "legacy": the legacy default stream (as dynasoar's CUDA backend uses), graphs skipped.
  bool legacy = argc > 2 && argv[2][0] == 'l';
  cudaStream_t s = 0; if (!legacy) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaEvent_t e0, e1; CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1));
  int lb = (large + 255) / 256; if (lb > 132 * 8) lb = 132 * 8;
  auto body = [&](int mode) { for (int i = 0; i < steps; i++) { launch(s, a, small, (small + 255) / 256, mode); launch(s, b, large, lb, mode); } };
  for (int round = 0; round < 2; round++)
  for (int graph = 0; graph < (legacy ? 1 : 2); graph++)
  for (int mode = 0; mode < 3; mode++) {
    float ms;
    if (!graph) {
      body(mode); CK(cudaStreamSynchronize(s));
      CK(cudaEventRecord(e0, s)); body(mode); CK(cudaEventRecord(e1, s));
    } else {
      cudaGraph_t g; cudaGraphExec_t ge;
      CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)); body(mode); CK(cudaStreamEndCapture(s, &g));
      CK(cudaGraphInstantiate(&ge, g, 0));
      CK(cudaGraphLaunch(ge, s)); CK(cudaStreamSynchronize(s));
      CK(cudaEventRecord(e0, s)); CK(cudaGraphLaunch(ge, s)); CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
      CK(cudaGraphExecDestroy(ge)); CK(cudaGraphDestroy(g));
    }
    CK(cudaEventSynchronize(e1)); CK(cudaEventElapsedTime(&ms, e0, e1));
    printf("large=%d stream=%s graph=%d mode=%d us_per_step=%.2f\n", large, legacy ? "legacy" : "own", graph, mode, ms * 1000 / steps);
  }
  // Correctness: every element was stepped the same number of times in each run; compare a and b's first values.
  float ha, hb; CK(cudaMemcpy(&ha, a, 4, cudaMemcpyDeviceToHost)); CK(cudaMemcpy(&hb, b + large - 1, 4, cudaMemcpyDeviceToHost));
  printf("check a0=%g blast=%g (equal when every launch ran in order)\n", ha, hb);
  return 0;
}
