/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tfixture.c - the shared suite fixture (common/tfixture.h):
 * owns env, set up before and torn down after each test of the suites
 * that use it.
 */
#include "common/tfixture.h"

#include "common/model.h"

struct tenv env;

void tfix_setup_d(void)
{
	tenv_init(&env, 0);
	tc_store_add(&env, TC_ROOT, "d", TFIX_D_INO, UDC_TYPE_DIR, 0xD);
	model_reset_calls(env.m);
}

void tfix_teardown(void)
{
	tenv_fini(&env);
}
