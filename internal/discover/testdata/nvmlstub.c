/* A stand-in libnvidia-ml.so.1 for TestNVMLStub: two H100s joined by
 * NVLink, GPU 1 in MIG mode with a 3g.40gb and a 1g.10gb instance, and
 * the answers and argument checks of the NVML calls corral binds. A call
 * with an unexpected argument answers NVML_ERROR_INVALID_ARGUMENT (2), so
 * a wrong constant or struct layout on the Go side shows in the result.
 * Built by the test with: cc -shared -fPIC -o libnvidia-ml.so.1 nvmlstub.c */
#include <stdio.h>
#include <string.h>

typedef struct { int kind; int index; } dev_t_; /* kind 0: GPU, 1: MIG device */
typedef struct { unsigned long long total, free, used; } mem_t;
typedef struct { void *device; unsigned int id, profileId, start, size; } gi_info_t;
typedef struct {
	unsigned int id, isP2pSupported, sliceCount, instanceCount, multiprocessorCount,
		copyEngineCount, decoderCount, encoderCount, jpegCount, ofaCount;
	unsigned long long memorySizeMB;
} gi_profile_t;

static dev_t_ gpus[2] = {{0, 0}, {0, 1}};
static dev_t_ migs[2] = {{1, 0}, {1, 1}};      /* GPU 1's MIG devices, slots 0 and 2 */
static unsigned int mig_gi[2] = {1, 5};          /* their GPU instance IDs */
static unsigned int mig_profile_id[2] = {9, 19}; /* 3g.40gb, 1g.10gb */
static unsigned long long mig_mb[2] = {40192, 9856};
static int gi_handles[2];

#define CHECK(c) do { if (!(c)) return 2; } while (0)
static int is_gpu(void *d) { return d == &gpus[0] || d == &gpus[1]; }
static int gpu_index(void *d) { return ((dev_t_ *)d)->index; }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) { *n = 2; return 0; }
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d) { CHECK(i < 2); *d = &gpus[i]; return 0; }

int nvmlDeviceGetUUID(void *d, char *buf, unsigned int len) {
	CHECK(len >= 80);
	dev_t_ *x = d;
	if (x->kind == 0) snprintf(buf, len, "GPU-stub-%d", x->index);
	else snprintf(buf, len, "MIG-stub-1-%u", mig_gi[x->index]);
	return 0;
}
int nvmlDeviceGetName(void *d, char *buf, unsigned int len) {
	CHECK(len >= 64 && is_gpu(d));
	snprintf(buf, len, "NVIDIA H100 80GB HBM3");
	return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, mem_t *m) {
	dev_t_ *x = d;
	unsigned long long mb = x->kind == 0 ? 81559 : mig_mb[x->index];
	m->total = mb << 20; m->used = 1ull << 20; m->free = m->total - m->used;
	return 0;
}
int nvmlDeviceGetMigMode(void *d, unsigned int *cur, unsigned int *pending) {
	CHECK(is_gpu(d));
	*cur = *pending = gpu_index(d) == 1;
	return 0;
}
int nvmlDeviceGetMaxMigDeviceCount(void *d, unsigned int *n) { CHECK(is_gpu(d)); *n = 7; return 0; }
int nvmlDeviceGetMigDeviceHandleByIndex(void *d, unsigned int slot, void **mig) {
	CHECK(is_gpu(d) && slot < 7);
	if (gpu_index(d) != 1 || (slot != 0 && slot != 2)) return 6; /* NOT_FOUND */
	*mig = &migs[slot / 2];
	return 0;
}
int nvmlDeviceGetGpuInstanceId(void *d, unsigned int *id) {
	dev_t_ *x = d;
	CHECK(x->kind == 1);
	*id = mig_gi[x->index];
	return 0;
}
int nvmlDeviceGetGpuInstanceById(void *d, unsigned int id, void **gi) {
	CHECK(d == &gpus[1]);
	for (int i = 0; i < 2; i++)
		if (mig_gi[i] == id) { *gi = &gi_handles[i]; return 0; }
	return 6;
}
int nvmlGpuInstanceGetInfo(void *gi, gi_info_t *info) {
	int i = (int *)gi - gi_handles;
	CHECK(i >= 0 && i < 2);
	info->device = &gpus[1]; info->id = mig_gi[i]; info->profileId = mig_profile_id[i];
	info->start = i * 4; info->size = i ? 1 : 4;
	return 0;
}
int nvmlDeviceGetGpuInstanceProfileInfo(void *d, unsigned int profile, gi_profile_t *p) {
	CHECK(is_gpu(d));
	if (profile >= 18) return 2;
	memset(p, 0, sizeof *p);
	switch (profile) {
	case 0: p->id = 19; p->sliceCount = 1; p->memorySizeMB = 9856; break;
	case 2: p->id = 9; p->sliceCount = 3; p->memorySizeMB = 40192; break;
	case 4: p->id = 0; p->sliceCount = 7; p->memorySizeMB = 80896; break;
	case 9: p->id = 15; p->sliceCount = 1; p->memorySizeMB = 19968; break;
	default: return 3; /* NOT_SUPPORTED */
	}
	p->instanceCount = 1;
	return 0;
}
int nvmlDeviceGetP2PStatus(void *a, void *b, int caps, int *status) {
	CHECK(is_gpu(a) && is_gpu(b) && caps == 2); /* NVML_P2P_CAPS_INDEX_NVLINK */
	*status = a != b ? 0 : 5;
	return 0;
}
int nvmlDeviceGetTemperature(void *d, int sensor, unsigned int *t) {
	CHECK(is_gpu(d) && sensor == 0); /* NVML_TEMPERATURE_GPU */
	*t = 41 + gpu_index(d);
	return 0;
}
int nvmlDeviceGetTemperatureThreshold(void *d, int kind, unsigned int *t) {
	CHECK(is_gpu(d) && kind == 1); /* NVML_TEMPERATURE_THRESHOLD_SLOWDOWN */
	*t = 87;
	return 0;
}
int nvmlDeviceGetTotalEccErrors(void *d, int type, int counter, unsigned long long *n) {
	CHECK(is_gpu(d) && type == 1 && counter == 0); /* UNCORRECTED, VOLATILE_ECC */
	*n = gpu_index(d) == 1 ? 3 : 0;
	return 0;
}
int nvmlDeviceGetRemappedRows(void *d, unsigned int *corr, unsigned int *unc, unsigned int *pending, unsigned int *failed) {
	CHECK(is_gpu(d));
	*corr = 2; *unc = 1; *pending = gpu_index(d) == 0; *failed = 0;
	return 0;
}
int nvmlDeviceGetRetiredPagesPendingStatus(void *d, int *state) { return 3; }
