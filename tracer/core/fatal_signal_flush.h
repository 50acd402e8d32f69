#pragma once
// Flushing the trace when the traced process dies of a signal, so that a
// crash or a kill leaves the records appended up to the signal in the file,
// not only those up to the last periodic flush.
//
// A signal handler may not lock, allocate or compress, so the handler does
// none of the work: it asks the sink's writer thread for a flush through
// lock-free atomics (TraceSink::request_signal_flush), waits for it in a
// nanosleep loop bounded by `wait` (SSGD_TRACER_SIGNAL_FLUSH_MS, 2 s by
// default), and then hands the signal on exactly as if the tracer were
// absent: to the handler that was installed before (SA_SIGINFO or plain,
// with its sa_mask, SA_NODEFER and SA_RESETHAND honoured), or, when that was
// SIG_DFL, by restoring SIG_DFL and raising the signal again, so the process
// dies of the same signal, with a core dump where the default makes one.
//
// Signals taken over: SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTERM, and
// SIGINT and SIGHUP only when their disposition is SIG_DFL at install (an
// interpreter such as Python owns SIGINT). A signal the program ignores
// (SIG_IGN) is left alone. A handler the program installs afterwards
// replaces this one; if it chains to the handler it found (as Python's
// faulthandler does), the flush still happens.
//
// What the flush holds: every record appended to a producer before the
// writer took the buffers, including producers' partly filled buffers
// (taken with the same atomic exchange as a periodic flush, so never one
// being written), and what the signal flush hook hands over (the CUPTI
// source: cuptiActivityFlushAll). What it cannot hold: the buffer of a
// thread interrupted in the middle of RecordProducer::append (that thread
// holds it outside its slot), records appended after the writer took the
// buffers, and anything when the writer cannot finish in time (for example
// because the dying thread holds a lock the writer needs, such as malloc's
// after heap corruption): the handler then stops waiting and the file keeps
// what earlier flushes wrote. The file stays under its temporary name with
// no footer (the process may survive a chained handler, so the flush never
// closes the file); TraceReader reads it and reports it as cut short.
//
// Special cases: a fault on the writer thread itself (waiting would wait
// for that thread), a process forked from the traced one (it has no writer
// thread) and a closed sink hand the signal on at once. A second signal
// during a flush, on another thread or nested on the waiting one, waits for
// that same flush until the same deadline, then is handed on; a fault in
// the handler itself kills the process with that fault's signal (the
// kernel's action for a synchronous signal that is blocked).

#include <chrono>

#include "tracer/core/trace_sink.h"

namespace ssgd::tracer {

// Installs the handlers for `sink` (which must outlive them, or be
// detached by uninstall_fatal_signal_flush). Calling it again only changes
// the sink and the wait. Returns how many signals were taken over.
int install_fatal_signal_flush(TraceSink& sink, std::chrono::milliseconds wait) noexcept;

// Restores the previous disposition of every signal whose handler is still
// this one, and forgets the sink. Called before the sink closes.
void uninstall_fatal_signal_flush() noexcept;

}  // namespace ssgd::tracer
