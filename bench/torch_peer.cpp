// SPDX-License-Identifier: MIT
#include "bench/torch_peer.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

namespace bench {
namespace {

// Generous: a setup builds 4096 x 4096 inputs or a 10^6-row table, a turn of
// exp over a transposed view takes about a second per call in torch 1.13.
constexpr int kStartMs = 120'000, kCommandMs = 300'000;

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TorchPeer::TorchPeer(const std::string& python, const std::string& script) {
  int in[2], out[2];  // in: parent -> child stdin; out: child stdout -> parent
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) {
    why_ = std::string("pipe: ") + std::strerror(errno);
    return;
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    why_ = std::string("fork: ") + std::strerror(errno);
    return;
  }
  if (pid == 0) {
    // The child: dies with its parent, even if the parent is killed (SIGKILL
    // included); if the parent died before prctl took effect, exit now.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);
    dup2(in[0], 0);
    dup2(out[1], 1);
    execl(python.c_str(), python.c_str(), script.c_str(), "--serve", static_cast<char*>(nullptr));
    std::fprintf(stderr, "peer pytorch: cannot run %s: %s\n", python.c_str(), std::strerror(errno));
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  pid_ = pid;
  to_child_ = in[1];
  from_child_ = out[0];
  std::string line;
  // A missing torch prints one line (its reason) and exits: report that line.
  if (!receive(line, kStartMs)) {
    stop(why_.empty() ? "no answer from " + script : why_);
  } else if (!starts_with(line, "ready ")) {
    stop(line);
  } else {
    try {
      config_ = nlohmann::json::parse(line.substr(6));
    } catch (const std::exception& e) {
      stop(std::string("bad ready line: ") + e.what());
    }
  }
}

TorchPeer::~TorchPeer() {
  if (pid_ <= 0) return;
  send("quit");
  close(to_child_);
  close(from_child_);
  for (int i = 0; i < 50; ++i) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

void TorchPeer::stop(const std::string& why) {
  why_ = why.empty() ? "child exited" : why;
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    close(to_child_);
    close(from_child_);
  }
  pid_ = -1;
}

bool TorchPeer::send(const std::string& line) {
  const std::string msg = line + "\n";
  std::size_t done = 0;
  while (done < msg.size()) {
    // MSG_NOSIGNAL is for sockets; strata_bench ignores SIGPIPE instead.
    const ssize_t n = write(to_child_, msg.data() + done, msg.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      why_ = std::string("write to child: ") + std::strerror(errno);
      return false;
    }
    done += std::size_t(n);
  }
  return true;
}

bool TorchPeer::receive(std::string& line, int timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    if (const std::size_t nl = buffer_.find('\n'); nl != std::string::npos) {
      line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return true;
    }
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) {
      why_ = "no answer within " + std::to_string(timeout_ms / 1000) + " s";
      return false;
    }
    pollfd p{from_child_, POLLIN, 0};
    const int r = poll(&p, 1, int(left));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;  // the deadline check above ends the wait
    char buf[4096];
    const ssize_t n = read(from_child_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // End of file: the child exited; what it printed last is the reason.
      if (!buffer_.empty()) {
        line = buffer_;
        buffer_.clear();
        return true;
      }
      why_ = "child exited";
      return false;
    }
    buffer_.append(buf, std::size_t(n));
  }
}

bool TorchPeer::ask(const std::string& line, std::string& reply, int timeout_ms) {
  if (pid_ <= 0) return false;
  if (!send(line) || !receive(reply, timeout_ms)) {
    stop(why_ + " (after \"" + line + "\")");
    return false;
  }
  return true;
}

std::vector<std::string> TorchPeer::rows() {
  std::vector<std::string> names;
  std::string reply;
  if (!ask("list", reply, kCommandMs) || !starts_with(reply, "rows")) return names;
  std::istringstream in(reply.substr(4));
  for (std::string name; in >> name;) names.push_back(name);
  return names;
}

bool TorchPeer::setup(const std::string& row, std::string& error) {
  std::string reply;
  error.clear();
  if (!ask("setup " + row, reply, kCommandMs)) {
    error = why_;
    return false;
  }
  if (reply == "ok") return true;
  if (reply != "none") error = starts_with(reply, "error ") ? reply.substr(6) : reply;
  return false;
}

std::vector<double> TorchPeer::run(const std::string& row, int reps, double warm_ms,
                                   std::string& error) {
  std::vector<double> times;
  std::string reply;
  char warm[32];
  std::snprintf(warm, sizeof warm, "%.1f", warm_ms);
  if (!ask("run " + row + " " + std::to_string(reps) + " " + warm, reply, kCommandMs)) {
    error = why_;
    return times;
  }
  if (!starts_with(reply, "ok")) {
    error = starts_with(reply, "error ") ? reply.substr(6) : reply;
    return times;
  }
  std::istringstream in(reply.substr(2));
  for (double t; in >> t;) times.push_back(t);
  if (int(times.size()) != reps) {
    error = "bad reply: " + reply;
    times.clear();
  }
  return times;
}

}  // namespace bench
