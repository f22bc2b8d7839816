// A small fixed-size thread pool for `-j N`. Tasks may submit more tasks
// (a stage-group task fans out its cells once the shared stage is built).
// wait() returns when the queue is empty and no task is running. Tasks must
// not throw: the build driver turns every failure into a cell result.
#pragma once
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace imgtool::builder {

class TaskPool {
 public:
  explicit TaskPool(int threads);
  ~TaskPool();  // waits, then joins
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;
  void submit(std::function<void()> task);
  void wait();

 private:
  void worker();
  std::mutex mu_;
  std::condition_variable work_cv_, idle_cv_;
  std::deque<std::function<void()>> queue_;
  int running_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace imgtool::builder
