// SPDX-License-Identifier: MIT
#pragma once
/// Test support: which sanitizer, if any, this test file is built with (gcc
/// says so with __SANITIZE_*__, clang through __has_feature). Each is 1 or 0.
/// Tests whose subject is the system allocator's behaviour skip under them:
/// the sanitizers replace malloc (AddressSanitizer also aborts, rather than
/// fails, on impossible sizes, and quarantines freed memory).

#if defined(__SANITIZE_ADDRESS__)
#define STRATA_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef STRATA_TEST_UNDER_ASAN
#define STRATA_TEST_UNDER_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define STRATA_TEST_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRATA_TEST_UNDER_TSAN 1
#endif
#endif
#ifndef STRATA_TEST_UNDER_TSAN
#define STRATA_TEST_UNDER_TSAN 0
#endif
