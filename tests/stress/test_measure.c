/*
 * tests/stress/test_measure.c - udc-stress's latency percentiles
 * (stress/measure.c, lat_quantile).
 *
 * Until issue 17 a percentile was its histogram bucket's upper bound (a
 * p99 of 2097151 ns for calls of 2.0 ms): these check that it is
 * interpolated within the bucket, exact where the buckets are (below
 * LAT_SUB ns), never past the largest call, and monotonic in q.
 */
#include <criterion/criterion.h>

#include "stress/measure.h"

static struct lat_hist h;

static void fill(uint64_t from, uint64_t to)
{
	memset(&h, 0, sizeof(h));
	for (uint64_t v = from; v <= to; v++)
		lat_record(&h, v);
}

Test(measure, exact_below_the_first_power)
{
	fill(1, 10);
	cr_expect_eq(lat_quantile(&h, 0.5), 5);
	cr_expect_eq(lat_quantile(&h, 1.0), 10);
	cr_expect_eq(lat_quantile(&h, 0.0), 1);
}

Test(measure, interpolated_within_a_bucket)
{
	/* 1,000,000 calls spread evenly over [1 ms, 3 ms): each percentile
	 * within 1% of the true one (a bucket is 6% wide there). */
	memset(&h, 0, sizeof(h));
	for (uint64_t k = 0; k < 1000000; k++)
		lat_record(&h, 1000000 + 2 * k);
	const double qs[] = { 0.5, 0.9, 0.99, 0.999 };
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double want = 1000000 + 2000000 * qs[i];
		double got = (double)lat_quantile(&h, qs[i]);
		cr_expect(got > want * 0.99 && got < want * 1.01, "p%g: %.0f, want %.0f",
			  qs[i] * 100, got, want);
	}
}

Test(measure, never_past_the_largest_call_and_monotonic)
{
	memset(&h, 0, sizeof(h));
	for (int i = 0; i < 99; i++)
		lat_record(&h, 100);
	lat_record(&h, 2000001);   /* alone in its bucket, low in it */
	cr_expect_eq(lat_quantile(&h, 1.0), 2000001);
	cr_expect_leq(lat_quantile(&h, 0.999), 2000001);
	uint64_t last = 0;
	for (double q = 0.0; q <= 1.0; q += 0.001) {
		uint64_t v = lat_quantile(&h, q);
		cr_expect_geq(v, last, "q %g: %llu after %llu", q, (unsigned long long)v,
			      (unsigned long long)last);
		last = v;
	}
}
