// swthrottle's sliding-window core, the public header for other C++ programs:
//
//   #include "window/core.h"      (link: swthrottle_window)
//
//   enum class Ev { Login, Failure, count };
//   swthrottle::window::TypedWindow<Ev> w(60'000, 10);   // 1 minute, 10 buckets, efficient mode
//   w.add(now_ms, Ev::Failure);
//   if (w.count(Ev::Failure) >= 5) ...
//
// See window/window.h for the interface and what `t` and `now` mean,
// window/accurate.h and window/efficient.h for each mode's guarantees.
#pragma once

#include "window/accurate.h"
#include "window/bucket.h"
#include "window/efficient.h"
#include "window/typed.h"
#include "window/window.h"
