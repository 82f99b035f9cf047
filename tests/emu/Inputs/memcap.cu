// memcap.test's program: the emulated device's memory on demand -- a cap
// (gnnemu_set_mem_cap, or GNNEMU_MEM_CAP) that cudaMalloc may not pass and
// cudaMemGetInfo reports, and the k-th cudaMalloc failing
// (gnnemu_fail_malloc, or GNNEMU_MALLOC_FAIL) -- with the counters a
// leak check reads.
#include <cuda_runtime.h>
#include <stdio.h>

static void
info(const char *what)
{
	size_t f = 0, t = 0;
	gnnemu_stats st;

	cudaMemGetInfo(&f, &t);
	gnnemu_get_stats(&st);
	printf("%s: free %zu of %zu; mallocs %llu, live %llu (%zu bytes), peak %zu\n", what, f, t, st.mallocs, st.live,
	       st.live_bytes, st.peak_bytes);
}

static void
try_malloc(const char *what, void **p, size_t n)
{
	cudaError_t e = cudaMalloc(p, n);

	printf("%s: %s, last error %s\n", what, cudaGetErrorName(e), cudaGetErrorName(cudaGetLastError()));
}

int
main(void)
{
	void *a = NULL, *b = NULL, *c = NULL;

	info("start");
#ifdef FROM_ENV
	try_malloc("malloc 1 (GNNEMU_MALLOC_FAIL=2)", &a, 1000);
	try_malloc("malloc 2", &b, 1000);
	try_malloc("malloc 3", &c, 5000);   /* past GNNEMU_MEM_CAP=4K */
	info("env");
	cudaFree(a);
	return 0;
#endif
	gnnemu_set_mem_cap(4096);
	struct cudaDeviceProp prop;
	cudaGetDeviceProperties(&prop, 0);
	printf("totalGlobalMem %zu\n", prop.totalGlobalMem);
	info("cap 4096");
	try_malloc("malloc 1000", &a, 1000);   /* counts 1024 */
	info("a");
	try_malloc("malloc 3073", &b, 3073);   /* 3328 > 3072 free */
	try_malloc("malloc 3072", &b, 3072);
	info("a, b");
	try_malloc("malloc 1", &c, 1);
	cudaFree(a);
	info("b");
	gnnemu_reset_peak();
	info("peak reset");
	gnnemu_fail_malloc(2);
	try_malloc("malloc 1 (the first from now)", &a, 1);
	try_malloc("malloc 1 (the second: fails)", &c, 1);
	try_malloc("malloc 1 (the third)", &c, 1);
	gnnemu_set_mem_cap(0);
	info("no cap");
	cudaFree(a);
	cudaFree(b);
	cudaFree(c);
	info("end");
	return 0;
}
