/*
 * A program using a compiled Tiny (Inputs/tiny.gnn): built by the driver
 * tests against tiny.o and gnncc's link flags, to show that the object,
 * its header and the runtime link into a C program.
 */
#include <stdio.h>

#include "tiny.h"

int
main(void)
{
	Tiny *m = NULL;
	gnn_status s;
	int i;

	printf("model %s: %d params\n", Tiny_desc.name, Tiny_desc.nparams);
	for (i = 0; i < Tiny_desc.nparams; i++)
		printf("param %s\n", Tiny_desc.params[i].name);
	s = Tiny_create(&m);
	printf("create: %s\n", gnn_status_name(s));
	if (s == GNN_OK)
		Tiny_destroy(m);
	return 0;
}
