#pragma once
// Clang's thread-safety annotations (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html);
// empty under other compilers. Checked by the `clang` preset (-Wthread-safety). Use them with
// ferry::Mutex (base/mutex.h).

#if defined(__clang__)
#define FERRY_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define FERRY_THREAD_ANNOTATION_(x)
#endif

#define CAPABILITY(x) FERRY_THREAD_ANNOTATION_(capability(x))
#define SCOPED_CAPABILITY FERRY_THREAD_ANNOTATION_(scoped_lockable)
#define GUARDED_BY(x) FERRY_THREAD_ANNOTATION_(guarded_by(x))
#define PT_GUARDED_BY(x) FERRY_THREAD_ANNOTATION_(pt_guarded_by(x))
#define ACQUIRED_BEFORE(...) FERRY_THREAD_ANNOTATION_(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) FERRY_THREAD_ANNOTATION_(acquired_after(__VA_ARGS__))
#define REQUIRES(...) FERRY_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define ACQUIRE(...) FERRY_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define RELEASE(...) FERRY_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define TRY_ACQUIRE(...) FERRY_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define EXCLUDES(...) FERRY_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define ASSERT_CAPABILITY(x) FERRY_THREAD_ANNOTATION_(assert_capability(x))
#define RETURN_CAPABILITY(x) FERRY_THREAD_ANNOTATION_(lock_returned(x))
#define NO_THREAD_SAFETY_ANALYSIS FERRY_THREAD_ANNOTATION_(no_thread_safety_analysis)
