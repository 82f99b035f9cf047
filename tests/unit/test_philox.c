/*
** test_philox.c: runtime/philox.h against Random123's known answers for
** Philox4x32-10 (its kat_vectors: counter 0 key 0, all ones, and the
** digits of pi), and the uniform draw's contract: word 0's top 24 bits
** over 2^24, the counter and key built from (t, stream, step, seed).
** Usage: test_philox
*/
#include "rtcheck.h"

#include <math.h>
#include <stdint.h>

#include "../../runtime/philox.h"

static void
kat(const uint32_t ctr[4], const uint32_t key[2], const uint32_t want[4])
{
	uint32_t out[4];

	gnn_philox4x32(ctr, key, out);
	if (!CHECK(memcmp(out, want, sizeof out) == 0))
		printf("  counter %08x %08x %08x %08x key %08x %08x: got %08x %08x %08x %08x\n", ctr[0], ctr[1],
			ctr[2], ctr[3], key[0], key[1], out[0], out[1], out[2], out[3]);
}

int
main(void)
{
	static const uint32_t c0[4] = {0, 0, 0, 0}, k0[2] = {0, 0},
		w0[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
	static const uint32_t c1[4] = {0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
		k1[2] = {0xffffffff, 0xffffffff}, w1[4] = {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd};
	static const uint32_t c2[4] = {0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
		k2[2] = {0xa4093822, 0x299f31d0}, w2[4] = {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1};
	uint32_t ctr[4], key[2], out[4];
	uint64_t seed = 0x299f31d0a4093822u, t = 0x85a308d3243f6a88u;
	float u;

	kat(c0, k0, w0);
	kat(c1, k1, w1);
	kat(c2, k2, w2);

	/* gnn_philox_uniform's block: counter (t low, t high, stream, step),
	 * key (seed low, seed high), word 0's top 24 bits */
	ctr[0] = (uint32_t)t, ctr[1] = (uint32_t)(t >> 32), ctr[2] = 0x13198a2e, ctr[3] = 0x03707344;
	key[0] = (uint32_t)seed, key[1] = (uint32_t)(seed >> 32);
	gnn_philox4x32(ctr, key, out);
	CHECK(out[0] == 0xd16cfe09);
	u = gnn_philox_uniform(seed, 0x03707344, 0x13198a2e, t);
	CHECK(u == (float)(0xd16cfe09u >> 8) / 16777216.0f);
	CHECK(gnn_philox_uniform(0, 0, 0, 0) == (float)(0x6627e8d5u >> 8) / 16777216.0f);
	/* the step's high half is not part of the counter */
	CHECK(gnn_philox_uniform(1, 5, 2, 3) == gnn_philox_uniform(1, 5 + (1ull << 32), 2, 3));
	/* dropout's draws: element t is word t % 4 of block t / 4 (the
	 * all-zero block's four known words, then the next block's first) */
	{
		static const uint32_t w[4] = {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8};
		uint32_t c1[4] = {1, 0, 0, 0}, k[2] = {0, 0}, o[4];
		for (int i = 0; i < 4; i++)
			CHECK(gnn_dropout_uniform(0, 0, 0, (uint64_t)i) == (float)(w[i] >> 8) / 16777216.0f);
		gnn_philox4x32(c1, k, o);
		CHECK(gnn_dropout_uniform(0, 0, 0, 4) == (float)(o[0] >> 8) / 16777216.0f);
		CHECK(gnn_dropout_uniform(0, 0, 0, 7) == (float)(o[3] >> 8) / 16777216.0f);
	}
	/* the dropout mask keeps draws at or above p */
	u = gnn_dropout_uniform(seed, 0x03707344, 0x13198a2e, t);
	CHECK(gnn_dropout_keep(seed, 0x03707344, 0x13198a2e, t, u) == 1);
	CHECK(gnn_dropout_keep(seed, 0x03707344, 0x13198a2e, t, nextafterf(u, 2)) == 0);
	return summary();
}
