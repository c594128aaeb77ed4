// SPDX-License-Identifier: MIT
// init, finalize and the process group's accessors (dist/process_group.hpp).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

#include "dist/internal/group.hpp"
#include "dist/process_group.hpp"

namespace strata::dist {

namespace detail {
namespace {

std::unique_ptr<Group>& the_group() {
  static std::unique_ptr<Group> g;
  return g;
}
std::mutex& group_mutex() {
  static std::mutex m;
  return m;
}

std::chrono::milliseconds initial_timeout(const Options& o) {
  if (o.timeout) {
    if (o.timeout->count() <= 0) {
      strata::detail::fail<ValueError>("st::dist::init", "the timeout must be positive, got ",
                                       o.timeout->count(), " ms");
    }
    return *o.timeout;
  }
  if (const char* env = std::getenv("STRATA_DIST_TIMEOUT"); env && *env) {
    char* end = nullptr;
    const double s = std::strtod(env, &end);
    if (end == env || *end != '\0' || !(s > 0) || s > 1e9) {
      strata::detail::fail<ValueError>("st::dist::init", "STRATA_DIST_TIMEOUT='", env,
                                       "' is not a positive number of seconds");
    }
    return std::chrono::milliseconds(int64_t(s * 1000.0 + 0.5));
  }
  return std::chrono::seconds(300);
}

// Polls a request made during init (the engine is not running yet) until the deadline.
void wait_during_init(MPI_Request& r, Clock::time_point deadline, const char* what, int rank,
                      std::chrono::milliseconds timeout) {
  while (!mpi_test(r, what, rank)) {
    if (Clock::now() > deadline) {
      throw DistError(std::string("st::dist::init on rank ") + std::to_string(rank) + ": " + what +
                      " not complete after " + seconds_text(timeout) +
                      " (the timeout): another rank did not call st::dist::init");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

void finalize_at_exit() {
  try {
    finalize();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "st::dist::finalize at exit: %s\n", e.what());
  }
}

}  // namespace

Group& group(std::string_view op) {
  auto& g = the_group();
  if (!g) {
    throw DistError("st::dist::" + std::string(op) +
                    ": the process group is not initialised: call st::dist::init() first");
  }
  return *g;
}

}  // namespace detail

using detail::group;

void init(const Options& options) {
  std::lock_guard lock(detail::group_mutex());
  auto& slot = detail::the_group();
  if (slot) return;
  const auto timeout = detail::initial_timeout(options);
  auto g = std::make_unique<detail::Group>();
  int initialised = 0, provided = 0;
  MPI_Initialized(&initialised);
  if (!initialised) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      throw DistError("st::dist::init: MPI_Init_thread failed (is this run by mpirun?)");
    }
    g->owns_mpi = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_SERIALIZED) {
    throw DistError(
        "st::dist::init: MPI gives thread level " + std::to_string(provided) +
        ", below MPI_THREAD_SERIALIZED, which strata's communication thread needs: initialise "
        "MPI with MPI_Init_thread(..., MPI_THREAD_MULTIPLE, ...) or let st::dist::init do it");
  }
  const auto deadline = detail::Clock::now() + timeout;
  MPI_Comm_rank(MPI_COMM_WORLD, &g->rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g->world);
  // strata's own communicator: the program's MPI calls never match strata's.
  MPI_Request r = MPI_REQUEST_NULL;
  if (g->owns_mpi) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (int rc = MPI_Comm_idup(MPI_COMM_WORLD, &g->comm, &r); rc != MPI_SUCCESS) {
    detail::mpi_failed(rc, "MPI_Comm_idup", "init", g->rank);
  }
  detail::wait_during_init(r, deadline, "MPI_Comm_idup", g->rank, timeout);
  MPI_Comm_set_errhandler(g->comm, MPI_ERRORS_RETURN);
  // The local rank: how many lower ranks run on the same host.
  std::vector<char> names(std::size_t(g->world) * MPI_MAX_PROCESSOR_NAME, '\0');
  char mine[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(mine, &len);
  if (int rc = MPI_Iallgather(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                              MPI_MAX_PROCESSOR_NAME, MPI_CHAR, g->comm, &r);
      rc != MPI_SUCCESS) {
    detail::mpi_failed(rc, "MPI_Iallgather", "init", g->rank);
  }
  detail::wait_during_init(r, deadline, "the exchange of host names", g->rank, timeout);
  for (int k = 0; k < g->rank; ++k) {
    if (std::strncmp(names.data() + std::size_t(k) * MPI_MAX_PROCESSOR_NAME, mine,
                     MPI_MAX_PROCESSOR_NAME) == 0) {
      ++g->local_rank;
    }
  }
  if (options.check_collectives) {
    g->check = *options.check_collectives;
  } else if (const char* env = std::getenv("STRATA_DIST_CHECK"); env && *env) {
    g->check = std::strcmp(env, "1") == 0;
  } else {
#ifdef NDEBUG
    g->check = false;
#else
    g->check = true;  // a debug build checks every collective
#endif
  }
  g->engine = std::make_unique<detail::Engine>(g->rank, g->world, timeout);
  slot = std::move(g);
  static std::once_flag at_exit;
  std::call_once(at_exit, [] { std::atexit(detail::finalize_at_exit); });
}

bool is_initialized() {
  std::lock_guard lock(detail::group_mutex());
  return detail::the_group() != nullptr;
}

void finalize() {
  std::unique_lock lock(detail::group_mutex());
  auto& slot = detail::the_group();
  if (!slot) return;
  detail::Group& g = *slot;
  // Every rank arrives before MPI is finalised; a rank that never does (hung, dead) makes
  // the barrier fail after the timeout instead of MPI_Finalize waiting forever.
  std::string failure = g.engine->broken();
  if (failure.empty()) {
    lock.unlock();  // barrier() takes no lock, but a collective's error path may call group()
    try {
      barrier();
    } catch (const DistError& e) {
      failure = e.what();
    }
    lock.lock();
  }
  if (!failure.empty()) {
    // Stuck peers cannot be finalised with; end the whole job. The engine thread is left
    // running: it may be inside MPI, and MPI_Abort ends the process anyway.
    std::fprintf(stderr,
                 "st::dist::finalize on rank %d: a collective failed, ending the MPI job "
                 "(MPI_Abort): %s\n",
                 g.rank, failure.c_str());
    std::fflush(stdout);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);  // MPI_Abort does not return; in case an MPI does
  }
  g.engine.reset();  // joins the thread: nothing runs
#ifdef STRATA_HAS_NCCL
  detail::destroy_nccl(g);
#endif
  MPI_Comm_free(&g.comm);
  const bool owns = g.owns_mpi;
  slot.reset();
  if (owns) MPI_Finalize();
}

int rank() { return group("rank").rank; }
int world_size() { return group("world_size").world; }
int local_rank() { return group("local_rank").local_rank; }

void set_timeout(std::chrono::milliseconds t) {
  if (t.count() <= 0) {
    strata::detail::fail<ValueError>("st::dist::set_timeout", "the timeout must be positive, got ",
                                     t.count(), " ms");
  }
  group("set_timeout").engine->set_timeout(t);
}

std::chrono::milliseconds timeout() { return group("timeout").engine->timeout(); }

void set_check_collectives(bool on) { group("set_check_collectives").check = on; }

bool nccl_built() {
#ifdef STRATA_HAS_NCCL
  return true;
#else
  return false;
#endif
}

}  // namespace strata::dist
