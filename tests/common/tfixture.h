/* SPDX-License-Identifier: MIT */
/*
 * tests/common/tfixture.h - a Criterion suite fixture that test files
 * share: env, a struct tenv (common/tcache.h, no flags) whose store and
 * cache hold one directory, "d" = TFIX_D_INO, under the root, with the
 * model's call counts reset, so that a test counts only its own backend
 * calls.  Used as
 *
 *	TestSuite(name, .init = tfix_setup_d, .fini = tfix_teardown, ...);
 *
 * Each test is set up and torn down on its own (Criterion runs it in a
 * process of its own), so several files' suites share the one env; a file
 * that includes this header defines no env of its own.
 */
#ifndef UDC_TEST_TFIXTURE_H
#define UDC_TEST_TFIXTURE_H

#include "common/tcache.h"

#define TFIX_D_INO ((udc_ino)10)

extern struct tenv env;

void tfix_setup_d(void);
void tfix_teardown(void);

#endif
