// Clang's thread-safety attributes (https://clang.llvm.org/docs/ThreadSafetyAnalysis.html)
// under qrm names. With clang and -Wthread-safety (the clang build scripts/fuzz makes, in
// CI) a member marked QRM_GUARDED_BY(mu_) may only be touched while mu_ is held, and a
// function marked QRM_REQUIRES(mu_) only called so; the compiler checks every access. Other
// compilers see nothing.
#pragma once

#if defined(__clang__)
#define QRM_THREAD_ANNOTATION_(x) __attribute__((x))
#else
#define QRM_THREAD_ANNOTATION_(x)
#endif

#define QRM_CAPABILITY(name) QRM_THREAD_ANNOTATION_(capability(name))
#define QRM_SCOPED_CAPABILITY QRM_THREAD_ANNOTATION_(scoped_lockable)
#define QRM_GUARDED_BY(x) QRM_THREAD_ANNOTATION_(guarded_by(x))
#define QRM_PT_GUARDED_BY(x) QRM_THREAD_ANNOTATION_(pt_guarded_by(x))
#define QRM_REQUIRES(...) QRM_THREAD_ANNOTATION_(requires_capability(__VA_ARGS__))
#define QRM_EXCLUDES(...) QRM_THREAD_ANNOTATION_(locks_excluded(__VA_ARGS__))
#define QRM_ACQUIRE(...) QRM_THREAD_ANNOTATION_(acquire_capability(__VA_ARGS__))
#define QRM_RELEASE(...) QRM_THREAD_ANNOTATION_(release_capability(__VA_ARGS__))
#define QRM_TRY_ACQUIRE(...) QRM_THREAD_ANNOTATION_(try_acquire_capability(__VA_ARGS__))
#define QRM_RETURN_CAPABILITY(x) QRM_THREAD_ANNOTATION_(lock_returned(x))
// For the few functions the analysis cannot follow; say why beside each use.
#define QRM_NO_THREAD_SAFETY_ANALYSIS QRM_THREAD_ANNOTATION_(no_thread_safety_analysis)
