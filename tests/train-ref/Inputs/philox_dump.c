/* philox_dump SEED STEP STREAM N T0 [dropout]: gnn_philox_uniform
** (runtime/philox.h; with "dropout", gnn_dropout_uniform) of elements
** T0 .. T0+N-1, one a line as %.9g, for tests/ref/philox.py to be
** compared with. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "philox.h"

int
main(int argc, char **argv)
{
	unsigned long long seed, step, n, t0, t;
	uint32_t stream;
	int drop = argc == 7 && !strcmp(argv[6], "dropout");

	if (argc != 6 && !drop)
		return 2;
	seed = strtoull(argv[1], 0, 0);
	step = strtoull(argv[2], 0, 0);
	stream = (uint32_t)strtoul(argv[3], 0, 0);
	n = strtoull(argv[4], 0, 0);
	t0 = strtoull(argv[5], 0, 0);
	for (t = t0; t < t0 + n; t++)
		printf("%.9g\n", drop ? gnn_dropout_uniform(seed, step, stream, t) :
			gnn_philox_uniform(seed, step, stream, t));
	return 0;
}
