/*
** test_profile.c: runtime/profile.c's records through the GNN_PROF macro
** the generated launches use: a device whose timers give known times and
** work counters (as the emulated device's), the host clock without one,
** phases and the phase's program for launches that name none, names kept
** after the caller's buffers change, growth past the first block of
** records, the JSON lines and the table, an unwritable file as an error,
** and the launch running exactly once whether profiling is on or off.
** Usage: test_profile
*/
#include "rtcheck.h"

#include "../../runtime/device.h"

static int begins, ends;

static int
fake_begin(void *s, void **tok)
{
	begins++;
	*tok = s;   /* the stream comes back in end */
	return 0;
}

static int
fake_end(void *s, void *tok, double *us, long long w[3])
{
	ends++;
	*us = s == tok ? 12.5 : -7;
	w[0] = 4;
	w[1] = 100;
	w[2] = 30;
	return 0;
}

static const gnn_devprof fakeprof = {fake_begin, fake_end};
static gnn_device fakedev;

static int ran;

static void
launch(const gnn_device *dev, const char *model, const char *name, unsigned grid)
{
	GNN_PROF(dev, (void *)&fakedev, model, name, "lanes=8", grid, 256, 0)
		ran++;
}

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	static char buf[1 << 18];
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = 0;
	return buf;
}

int
main(void)
{
	char path[] = "/tmp/gnnprofXXXXXX", name[16];
	const gnn_launch_record *r;
	const char *old;
	int fd = mkstemp(path);
	FILE *t;

	fakedev.prof = &fakeprof;
	close(fd);
	/* off: the launch runs once and nothing is recorded */
	launch(&fakedev, "M", "M_g0", 3);
	CHECK(ran == 1 && begins == 0 && gnn_profile_count() == 0);

	CHECK_ST(gnn_profile_start("/nonexistent-dir/p.jsonl"), GNN_ERR_IO);
	CHECK_MSG("cannot open it for writing");
	CHECK(!gnn_prof_on_);

	CHECK_ST(gnn_profile_start(path), GNN_OK);
	launch(&fakedev, "M", "M_g0", 3);
	CHECK(ran == 2 && begins == 1 && ends == 1 && gnn_profile_count() == 1);
	r = gnn_profile_record(0);
	CHECK(r && !strcmp(r->model, "M") && !strcmp(r->phase, "forward") && !strcmp(r->kernel, "M_g0") &&
	      !strcmp(r->schedule, "lanes=8") && r->grid == 3 && r->block == 256 && r->shmem == 0);
	CHECK(r && r->us == 12.5 && r->warps == 4 && r->work == 100 && r->busiest == 30);

	/* a phase, and a launch that names no program takes the phase's */
	old = gnn_prof_phase_("bind", "M2");
	CHECK(old == NULL);
	launch(&fakedev, NULL, "db_count", 1);
	CHECK(gnn_prof_phase_(old, NULL) != NULL);
	r = gnn_profile_record(1);
	CHECK(r && !strcmp(r->phase, "bind") && !strcmp(r->model, "M2") && !strcmp(r->kernel, "db_count"));

	/* the host clock: no device timers, no work counters */
	launch(NULL, "M", "M_k4", 7);
	r = gnn_profile_record(2);
	CHECK(r && r->us >= 0 && r->warps == -1 && begins == 2 && !strcmp(r->phase, "forward"));

	/* names are the profile's own: the caller's buffer may change */
	for (int i = 0; i < 600; i++) {
		snprintf(name, sizeof name, "M_k%d", i % 5);
		launch(NULL, "M", name, (unsigned)i);
	}
	CHECK(gnn_profile_count() == 603 && ran == 604);
	r = gnn_profile_record(602);
	CHECK(r && !strcmp(r->kernel, "M_k4") && r->grid == 599);
	r = gnn_profile_record(3);
	CHECK(r && !strcmp(r->kernel, "M_k0") && r->grid == 0);
	CHECK(gnn_profile_record(603) == NULL);

	t = tmpfile();
	CHECK_ST(gnn_profile_print(t), GNN_OK);
	if (t) {
		static char buf[1 << 17];
		size_t n;
		rewind(t);
		n = fread(buf, 1, sizeof buf - 1, t);
		buf[n] = 0;
		fclose(t);
		CHECK(strstr(buf, "profile: 603 launches") != NULL);
		CHECK(strstr(buf, "total M forward: 602 launches") != NULL);
		CHECK(strstr(buf, "total M2 bind: 1 launches, 12.500 us") != NULL);
		CHECK(strstr(buf, "forward  M_g0                     lanes=8") != NULL);
	}
	CHECK_ST(gnn_profile_stop(), GNN_OK);
	CHECK(!gnn_prof_on_ && gnn_profile_count() == 603);
	{
		const char *j = slurp(path);
		const char *want = "{\"model\": \"M\", \"phase\": \"forward\", \"kernel\": \"M_g0\", \"schedule\": "
		                   "\"lanes=8\", \"grid\": 3, \"block\": 256, \"shmem\": 0, \"us\": 12.500, \"warps\": 4, "
		                   "\"work\": 100, \"busiest\": 30}\n{\"model\": \"M2\", \"phase\": \"bind\"";
		int lines = 0;
		CHECK(!strncmp(j, want, strlen(want)));
		for (; *j; j++)
			lines += *j == '\n';
		CHECK(lines == 603);
	}
	/* stopped: launches run, unrecorded; a new start begins afresh */
	launch(&fakedev, "M", "M_g0", 3);
	CHECK(ran == 605 && gnn_profile_count() == 603);
	CHECK_ST(gnn_profile_start(NULL), GNN_OK);
	CHECK(gnn_profile_count() == 0);
	launch(&fakedev, "M", "M_g1", 3);
	CHECK(gnn_profile_count() == 1 && !strcmp(gnn_profile_record(0)->kernel, "M_g1"));
	CHECK_ST(gnn_profile_stop(), GNN_OK);
	unlink(path);
	return summary();
}
